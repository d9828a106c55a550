"""Wrong implementations of the course exercises, one module per check family.

Each is a small, realistic learner mistake, written the way a learner would write it; its docstring
names the mistake in one line. ``tests/test_checks_mutants.py`` feeds them to the checks and asserts
the diagnosis.
"""
