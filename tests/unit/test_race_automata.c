/* stub suite: to be written */
#include <check.h>
Suite *atom_test_suite_race_automata(void);
Suite *atom_test_suite_race_automata(void) { return suite_create("race_automata"); }
