"""Kinds of failure message that mislead, ruled out across every check (issue 40, item 2): a rule for the family,
tested on every failure the wrong implementations of ``tests/mutants`` draw from the checks."""
import pytest
import torch

from tinylm_checks import CheckFailure
from tinylm_checks.failure import reads_alike

from mutants import MULTI, ROWS

pytestmark = pytest.mark.filterwarnings("ignore:The use of `x.T`:UserWarning")


@pytest.fixture(scope="module", autouse=True)
def single_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("expected, got, alike", [
    ("this batch's gradients, clipped (norm 0.544)", "norm 0.5440", True),  # issue 40: check_train_step
    ("self.dropout = 0.0", "Dropout", True),  # issue 40: the type read as a wrong value
    ("(2, 4, 8)", "(2, 8)", False),
    ("torch.float64", "torch.float32", False),
    ("norm 0.544 (max_grad_norm)", "norm 0.7000", False),
    ("emb.grad[0] = [0.1000, 0.2000]", "emb.grad[0] = [0.3000, 0.2000] (norm 0.5440)", False),
])
def test_reads_alike(expected, got, alike):
    assert reads_alike(expected, got) is alike


def _failures():
    rows = [(check, mutant) for check, mutant, _, _ in ROWS] + [(check, mutant) for check, mutant, _ in MULTI]
    seen = set()
    for check, mutant in rows:
        key = (check.__name__, getattr(mutant, "__name__", type(mutant).__name__))
        if key not in seen:
            seen.add(key)
            yield pytest.param(check, mutant, id="-".join(key))


@pytest.mark.parametrize("check, mutant", list(_failures()))
def test_no_failure_shows_expected_and_got_that_read_alike(check, mutant):
    """Every failure of every wrong implementation, and each further slip it names, says what differs."""
    try:
        check(mutant)
    except CheckFailure as e:
        for f in [e, *e.also]:
            assert not reads_alike(f.expected, f.got), str(e)
    else:
        pytest.fail(f"{check.__name__} passed {mutant}")
