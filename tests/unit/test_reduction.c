/* stub suite: to be written */
#include <check.h>
Suite *atom_test_suite_reduction(void);
Suite *atom_test_suite_reduction(void) { return suite_create("reduction"); }
