/* stub suite: to be written */
#include <check.h>
Suite *atom_test_suite_interleave(void);
Suite *atom_test_suite_interleave(void) { return suite_create("interleave"); }
