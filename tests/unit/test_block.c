/* stub suite: to be written */
#include <check.h>
Suite *atom_test_suite_block(void);
Suite *atom_test_suite_block(void) { return suite_create("block"); }
