/* stub suite: to be written */
#include <check.h>
Suite *atom_test_suite_tso(void);
Suite *atom_test_suite_tso(void) { return suite_create("tso"); }
