/* stub suite: to be written */
#include <check.h>
Suite *atom_test_suite_support(void);
Suite *atom_test_suite_support(void) { return suite_create("support"); }
