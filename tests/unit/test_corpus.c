/* stub suite: to be written */
#include <check.h>
Suite *atom_test_suite_corpus(void);
Suite *atom_test_suite_corpus(void) { return suite_create("corpus"); }
