"""Every check passes the reference implementation, at every seed, with exactly one line of output.

How long the checks take is measured by ``benchmarks/bench_checks.py`` (the course promises well under a
second per check on 2 cores); a timed assertion here would flake on a busy CI machine.
"""
import pytest
import torch

from mutants import REFERENCE
from test_checks_mutants import single_thread  # noqa: F401 - autouse fixture: run the checks on one thread

SEEDS = [0, 1, 2, 3, 4]


# The capstone's checks run processes (seconds each): the learner's seed and the hidden one.
CASES = [(check, reference, seed) for check, reference in REFERENCE.items()
         for seed in (SEEDS[:2] if check.__module__ == "tinylm_checks.capstone" else SEEDS)]


@pytest.mark.parametrize("check, reference, seed", CASES, ids=[f"{c.__name__}-{s}" for c, _, s in CASES])
def test_reference_passes_with_one_line(check, reference, seed, capsys):
    result = check(reference, seed=seed)
    out, err = capsys.readouterr()
    assert result is None
    lines = out.splitlines()
    assert len(lines) == 1, out
    assert lines[0].startswith(f"✔ {check.__name__} passed: "), lines[0]
    assert err == ""


def test_the_checks_broadcast_rule_is_torch_s():
    """tinylm_checks.attention._broadcasts writes out torch.broadcast_shapes's rule (which imports SymPy on first use)."""
    import itertools

    from tinylm_checks.attention import _broadcasts

    def torch_says(a, b):
        try:
            torch.broadcast_shapes(a, b)
        except RuntimeError:
            return False
        return True

    shapes = [s for n in range(4) for s in itertools.product([1, 2, 3], repeat=n)]
    assert all(_broadcasts(torch.empty(a), b) == torch_says(a, b) for a in shapes for b in shapes)
