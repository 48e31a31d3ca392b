/* stub suite: to be written */
#include <check.h>
Suite *atom_test_suite_trace(void);
Suite *atom_test_suite_trace(void) { return suite_create("trace"); }
