/* stub suite: to be written */
#include <check.h>
Suite *atom_test_suite_crosscheck(void);
Suite *atom_test_suite_crosscheck(void) { return suite_create("crosscheck"); }
