/* stub suite: to be written */
#include <check.h>
Suite *atom_test_suite_velodrome(void);
Suite *atom_test_suite_velodrome(void) { return suite_create("velodrome"); }
