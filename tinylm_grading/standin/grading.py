"""``tinylm_checks.grading`` while a notebook is autograded: the hidden line of a check cell,
``runpy.run_module("tinylm_checks.grading")["fresh"]().check_x(obj, seed=1)``, reaches the stand-in checks."""


def fresh():
    """The stand-in ``tinylm_checks`` (see its docstring)."""
    import tinylm_checks
    return tinylm_checks
