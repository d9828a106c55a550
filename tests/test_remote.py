"""tinylm_grading.remote: a check run in the grader's process on a learner's function or class that stays in an
agent (reached through JSON text, the same data path as a kernel's) reaches the same verdict as a check run on
the object itself: every row of the mutant suite fails with the same name and problem (two named
exceptions, REMOTE_DIFFERS), and the reference passes."""

import pytest
import torch

from tinylm_checks import CheckFailure
from tinylm_grading.remote import LoopbackTransport, stand_in, verdict

from mutants import LATE_FAILURE, REFERENCE, ROWS

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore:The use of `x.T`:UserWarning")]
# the capstone's checks take one function, repo(), whose dict of files is all that crosses the wire: one row per check
# (its late failure) shows that the remote verdict is the direct one; the others would rerun the same processes
FUNCTION_ROWS = [row for row in ROWS if row[0].__module__ != "tinylm_checks.capstone" or row[1] is LATE_FAILURE.get(row[0])]
SEEDS = (0, 1)
# Diagnoses that change a module of the learner's in place (a probe that swaps a submodule's forward) do not
# reach the kernel: the remote verdict still fails, with a less specific name.
REMOTE_DIFFERS = {("check_transformer_block", "BlockAttnWeights"), ("check_transformer_block", "TorchBlockAttnWeights")}


def remote(obj, name="learner_object"):
    return stand_in(LoopbackTransport({name: obj}), name)


def outcome(check, obj, seed):
    try:
        check(obj, seed=seed, quiet=True)
    except CheckFailure as e:
        return ("fail", e.mistake, f"{e.problem} | tried: {e.tried}")  # as test_checks_mutants reads a phrase
    except Exception as e:  # noqa: BLE001
        return ("crash", type(e).__name__, "")
    return ("pass", None, "")


@pytest.fixture(scope="module", autouse=True)
def single_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("row", FUNCTION_ROWS, ids=lambda r: f"{r[0].__name__}-{getattr(r[1], '__name__', type(r[1]).__name__)}")
def test_remote_verdict_equals_direct(row):
    """The remote verdict is the one tests/test_checks_mutants.py asserts for the object itself (the row's mistake and
    problem; the same mistake at seed 1), so the direct run is not repeated here."""
    check, wrong, mistake, phrase = row
    for seed in SEEDS:
        got = outcome(check, remote(wrong), seed)
        assert got[0] == "fail", (seed, got)
        if (check.__name__, getattr(wrong, "__name__", "")) in REMOTE_DIFFERS:
            assert mistake is not None and got[1] is None
            continue
        assert got[1] == mistake, (seed, got)
        if seed == 0:
            assert phrase in got[2], (phrase, got)


@pytest.mark.parametrize("check", list(REFERENCE), ids=lambda c: c.__name__)
def test_the_reference_passes_remotely(check):
    passed, text, failure = verdict(check, LoopbackTransport({"f": REFERENCE[check]}), "f")
    assert passed and failure is None, text
    assert text.count("✔") == 2


def test_names_the_learner_does_not_have_score_nothing():
    passed, text, failure = verdict(REFERENCE.__iter__().__next__(), LoopbackTransport({}), "softmax")
    assert not passed and text.startswith("NameError") and failure is None


def test_a_failed_verdict_carries_the_named_mistake():
    """What the class's report counts: the failure's message id and named mistakes, as the check raised them."""
    check, wrong, mistake, _ = next(row for row in FUNCTION_ROWS if row[2] is not None)
    passed, text, failure = verdict(check, LoopbackTransport({"f": wrong}), "f")
    assert not passed and text.startswith("CheckFailure: ")
    assert failure.mistakes[0] == mistake and failure.problem in text and failure.message_id


def test_a_lying_tensor_subclass_arrives_as_a_plain_tensor():
    class Liar(torch.Tensor):
        def __eq__(self, other):
            return torch.ones_like(self, dtype=torch.bool)
    fn = remote(lambda x: torch.Tensor._make_subclass(Liar, x * 0))
    out = fn(torch.ones(3))
    assert type(out) is torch.Tensor and torch.equal(out, torch.zeros(3))


def test_exceptions_come_back_as_the_builtin_of_the_same_name():
    def raises(x):
        raise IndexError("shape of the mask [2] does not match")
    with pytest.raises(IndexError, match="shape of the mask"):
        remote(raises)(torch.ones(2))
    class Custom(Exception):
        pass
    def raises_custom(x):
        raise Custom("mine")
    with pytest.raises(Exception) as e:
        remote(raises_custom)(torch.ones(2))
    assert type(e.value).__name__ == "Custom" and not isinstance(e.value, IndexError)


def test_gradients_flow_back_through_the_remote_call():
    fn = remote(lambda a, b: (a * b).sum(-1))
    a = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    fn(a, b).sum().backward()
    assert torch.equal(a.grad, b.detach()) and torch.equal(b.grad, a.detach())
    cut = remote(lambda a: a.detach() * 2)
    assert not cut(torch.ones(2, requires_grad=True)).requires_grad


def test_a_crash_in_the_kernel_names_the_learners_own_line():
    """The line a learner sees in their kernel's message also comes back from the grader's run of the check."""
    import linecache
    from tinylm_checks import check_softmax
    cell = "/tmp/ipykernel_7/1234.py"  # how IPython names a notebook cell's code
    source = "def softmax(x):\n    e = x.exp()\n    return e / e.sum(dim=5)\n"
    linecache.cache[cell] = (len(source), None, source.splitlines(True), cell)
    namespace = {}
    exec(compile(source, cell, "exec"), namespace)
    with pytest.raises(CheckFailure) as e:
        check_softmax(remote(namespace["softmax"]), quiet=True)
    assert e.value.got.endswith("; in softmax, line 3: return e / e.sum(dim=5)"), e.value.got
