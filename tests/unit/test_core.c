/* stub suite: to be written */
#include <check.h>
Suite *atom_test_suite_core(void);
Suite *atom_test_suite_core(void) { return suite_create("core"); }
