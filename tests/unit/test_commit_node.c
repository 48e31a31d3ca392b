/* stub suite: to be written */
#include <check.h>
Suite *atom_test_suite_commit_node(void);
Suite *atom_test_suite_commit_node(void) { return suite_create("commit_node"); }
