/* stub suite: to be written */
#include <check.h>
Suite *atom_test_suite_aerodrome(void);
Suite *atom_test_suite_aerodrome(void) { return suite_create("aerodrome"); }
