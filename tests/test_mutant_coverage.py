"""Every mistake a check can name has a mutant fed to *that very check* (tests/mutants/), asserting that diagnosis.

``test_every_registered_mistake_is_exercised_by_a_mutant`` (tests/test_checks_harmless.py) counts mistake ids across
all checks: ``scale_multiplied`` had a mutant for ``check_attention_scores`` and none for
``check_scaled_dot_product_attention``, which can name it too. Here it is held per check. What a check can name:

- every ``MISTAKE.<id>`` written in the check function's own code (the failures it raises itself), and
- every candidate mistake it hands to ``compare`` (directly or through the shared attention helpers) while it runs
  on the reference solution: the wrong outputs it matches a learner's output against.

A pair a check lists but cannot reach at its inputs goes in ``UNREACHABLE`` with the reason; the entry must stay
true (a mutant that the check names that way makes the entry fail).
"""
import ast
import importlib
import inspect
import pkgutil
import textwrap

import pytest

import tinylm_checks
from tinylm_checks import _core

from mutants import REFERENCE, ROWS
from test_checks_mutants import CHECK_BUGS, _name
from test_checks_mutants import single_thread  # noqa: F401 - autouse fixture: run the checks on one thread

# (check name, mistake id) -> why the check lists the mistake but no implementation can show it there.
UNREACHABLE: dict[tuple[str, str], str] = {
    ("check_scaled_dot_product_attention", "softmax_over_heads"):
        "3-D inputs come first, where no axis is the heads: a softmax over dim=1 (or -3) is named there, over the "
        "queries (or the batch)",
    **{(check, mistake): "no query of this check's masks may attend to no key, and its scores are small: a finite "
                         "fill value (-1e9, -1e4) gives exactly the reference's weights here (the attention-function "
                         "check's padding row and large scores catch it)"
       for check in ("check_self_attention", "check_multi_head_attention", "check_causal_self_attention")
       for mistake in ("finite_fill", "fill_too_weak")},
    **{(check, "mask_renormalised_after_softmax"): "with small scores and every row with an allowed key, zeroing the "
                                                   "masked weights and renormalising is the masked softmax exactly (the "
                                                   "attention-function check's large scores catch it)"
       for check in ("check_self_attention", "check_multi_head_attention", "check_causal_self_attention")},
    ("check_causal_self_attention", "mask_ignored"): "the module's mask is the causal one: ignoring it gives the "
                                                     "output of not_causal, which is named first",
}


def _own_ids(check) -> set[str]:
    """The ``MISTAKE.<id>`` attributes in the check function's own source."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(inspect.unwrap(check))))
    return {n.attr for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "MISTAKE"}


def _compared_ids(check, obj, monkeypatch) -> set[str]:
    """The candidate mistakes ``check`` hands to ``compare`` while it checks ``obj`` (the reference: it passes)."""
    seen: set[str] = set()
    original = _core.compare

    def recording(ctx, got, expected, what, tried, candidates=None, *args, **kwargs):
        pairs = candidates.items() if isinstance(candidates, dict) else candidates or ()
        seen.update(name for name, _ in pairs if name)
        return original(ctx, got, expected, what, tried, candidates, *args, **kwargs)

    for info in pkgutil.iter_modules(tinylm_checks.__path__):
        module = importlib.import_module(f"tinylm_checks.{info.name}")
        if getattr(module, "compare", None) is original:
            monkeypatch.setattr(module, "compare", recording)
    check(obj, quiet=True)
    return seen


def _named_by(check) -> set[str]:
    """The mistakes the rows of tests/mutants/ expect ``check`` to name (rows the check gets wrong do not count)."""
    return {m for c, mutant, m, _ in ROWS
            if c is check and m is not None and (c.__name__, _name(mutant)) not in CHECK_BUGS}


CHECKS = [c for c in REFERENCE if c.__module__ != "tinylm_checks.capstone"]  # the capstone's read processes' outcomes


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__ for c in CHECKS])
def test_every_mistake_a_check_can_name_has_a_mutant_of_that_check(check, monkeypatch):
    can_name = _own_ids(check) | _compared_ids(check, REFERENCE[check], monkeypatch)
    named = _named_by(check)
    unreachable = {m for (c, m) in UNREACHABLE if c == check.__name__}
    assert not unreachable & named, f"UNREACHABLE entries that a mutant reaches: {sorted(unreachable & named)}"
    missing = can_name - named - unreachable
    assert not missing, f"{check.__name__} can name {sorted(missing)}, but no mutant of {check.__name__} expects it"
