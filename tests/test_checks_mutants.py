"""The checks fail wrong implementations, and name the mistake exactly when they claim to know it.

Each row of ``ROWS`` is ``(check, mutant, expected mistake id or None, key phrase of the problem)``,
collected from the ``ROWS`` of every module in ``tests/mutants/`` (one module per stage's checks):
the check must raise ``CheckFailure`` (never another exception, never pass), ``exc.mistake`` must equal
the expected id exactly, the message must start with the problem line, the problem must contain the
key phrase, its expected: and got: lines must not read alike (``tinylm_checks.failure.reads_alike``), and a named
mistake's hint must be one written for that mistake.

Rows listed in ``CHECK_BUGS`` (and seeds listed in ``SEED_BUGS``) describe what the check *should* do
but does not yet: they are marked ``xfail(strict=True)``, so fixing the check turns them into an XPASS
failure, and the entry must go.
"""
import pytest
import torch

from tinylm_checks import MISTAKE_HINTS, MISTAKES, CheckFailure
from tinylm_checks.failure import reads_alike

from mutants import MULTI, ROWS

# the scores_dot_T mutant triggers PyTorch's deprecation warning for x.T on a 3-D tensor
pytestmark = pytest.mark.filterwarnings("ignore:The use of `x.T`:UserWarning")

# (check name, mutant name) -> what the check does wrong.
CHECK_BUGS: dict[tuple[str, str], str] = {}  # (check, mutant) -> why the check gets it wrong (none known)


@pytest.fixture(scope="module", autouse=True)
def single_thread():
    """The checks work on tiny tensors; on a busy 2-core machine two intra-op threads make each check
    10-40x slower (OpenMP synchronisation), so this module runs them on one thread."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _name(obj) -> str:
    if obj is None:
        return "None"
    if isinstance(obj, type) or callable(obj) and hasattr(obj, "__name__"):
        return obj.__name__
    return f"{type(obj).__name__}_instance"


def _params():
    for check, mutant, mistake, phrase in ROWS:
        key = (check.__name__, _name(mutant))
        marks = [pytest.mark.xfail(strict=True, reason=CHECK_BUGS[key])] if key in CHECK_BUGS else []
        yield pytest.param(check, mutant, mistake, phrase, id=f"{key[0]}-{key[1]}", marks=marks)


def run_check(check, obj, seed: int = 0) -> CheckFailure:
    """Run ``check(obj)`` and return the CheckFailure it raises; fail the test on a pass or a crash."""
    try:
        check(obj, seed=seed)
    except CheckFailure as exc:
        return exc
    except BaseException as exc:  # noqa: BLE001 - any other exception is a crash inside the checker
        pytest.fail(f"{check.__name__} crashed with {type(exc).__name__}: {exc} (expected CheckFailure)")
    pytest.fail(f"{check.__name__} passed the wrong implementation {_name(obj)}")


def test_table_is_well_formed():
    names = [(c.__name__, _name(m)) for c, m, _, _ in ROWS]
    assert len(names) == len(set(names)), "duplicate rows"
    assert set(CHECK_BUGS) <= set(names), "a CHECK_BUGS entry names no row"
    for _, _, mistake, phrase in ROWS:
        assert mistake is None or mistake in MISTAKES, f"{mistake!r} is not a registered mistake"
        assert phrase


def test_every_registered_mistake_has_its_own_hint():
    from tinylm_checks._text import CLASHES
    assert not CLASHES, f"message ids defined twice in tinylm_checks.messages: {CLASHES}"
    assert set(MISTAKES) == set(MISTAKE_HINTS)
    assert all(MISTAKE_HINTS[m].strip() and MISTAKES[m].strip() for m in MISTAKES)


def test_at_least_three_wrong_implementations_per_check():
    per_check = {}
    for check, mutant, _, _ in ROWS:
        if mutant is not None:
            per_check.setdefault(check.__name__, set()).add(_name(mutant))
    assert len(per_check) >= 11
    assert all(len(m) >= 3 for m in per_check.values()), {c: len(m) for c, m in per_check.items()}


@pytest.mark.parametrize("check, mutant, mistake, phrase", list(_params()))
def test_check_fails_mutant_with_exact_diagnosis(check, mutant, mistake, phrase):
    exc = run_check(check, mutant)
    msg = str(exc)
    assert exc.mistake == mistake, f"mistake {exc.mistake!r}, expected {mistake!r}\n{msg}"
    assert exc.check == check.__name__
    assert msg.splitlines()[0] == f"{check.__name__} failed: {exc.problem}"
    said = f"{exc.problem} | tried: {exc.tried}"  # a phrase may name what was tried too (a crash's input is there)
    assert phrase in said, f"{phrase!r} not in the problem {said!r}"
    assert not any(reads_alike(f.expected, f.got) for f in [exc, *exc.also]), f"expected and got read alike:\n{msg}"
    if mistake is not None:
        assert f"likely mistake: {MISTAKES[mistake]}" in msg, msg
        assert exc.hint and exc.hint_for == mistake, f"the hint is not the one written for {mistake}:\n{msg}"
    else:
        assert "likely mistake:" not in msg, msg


# (check name, mutant name, seed) -> why the check cannot tell this mistake apart at that seed's sizes.
SEED_BUGS: dict[tuple[str, str, int], str] = {
    ("check_multi_head_attention", "MHAScaleByDModelNotSqrt", 2):
        "at H = 2, d_model = 2 d_k: dividing by d_model is dividing by d_k ** 1/2 (= d_k / 2), named first",
}
SEEDS = [1, 2]  # seeds 3 and 4 repeat the multi-head sizes of 1 and 2


def _seed_params():
    for p in _params():
        check, mutant, mistake, _ = p.values
        if mistake is None or p.marks or check.__module__ == "tinylm_checks.capstone":
            continue  # the capstone's diagnoses read processes' outcomes, not sizes: no seed changes them
        for seed in SEEDS:
            key = (check.__name__, _name(mutant), seed)
            marks = [pytest.mark.xfail(strict=True, reason=SEED_BUGS[key])] if key in SEED_BUGS else []
            yield pytest.param(*p.values, seed, id=f"{p.id}-seed{seed}", marks=marks)


@pytest.mark.parametrize("check, mutant, mistake, phrase, seed", list(_seed_params()))
def test_diagnosis_does_not_depend_on_the_seed(check, mutant, mistake, phrase, seed):
    """Other seeds give other sizes; the named mistake must not change."""
    exc = run_check(check, mutant, seed=seed)
    assert exc.mistake == mistake, f"seed {seed}: mistake {exc.mistake!r}, expected {mistake!r}\n{exc}"


@pytest.mark.parametrize("check, mutant, mistakes", [pytest.param(*row, id=f"{row[0].__name__}-{row[1].__name__}")
                                                      for row in MULTI])
def test_independent_slips_are_named_in_one_report(check, mutant, mistakes):
    """A first attempt with several slips that cannot hide one another gets them all in one message: the first as
    usual, each other one under "and also:" with its likely mistake and its own hint."""
    exc = run_check(check, mutant)
    msg = str(exc)
    assert exc.mistakes == mistakes, msg
    assert msg.splitlines()[0] == f"{check.__name__} failed: {exc.problem}"
    assert not any(reads_alike(f.expected, f.got) for f in [exc, *exc.also]), f"expected and got read alike:\n{msg}"
    full = exc.text(reveal=True)  # as show_fix(), or the same slips again, show it
    for other in exc.also:
        block = msg.split(f"  and also: {other.problem}\n", 1)[1].split("  and also: ")[0]
        assert f"    likely mistake: {MISTAKES[other.mistake]}\n    look at:  {other.look}" in block, msg
        assert other.hint not in msg
        block = full.split(f"  and also: {other.problem}\n", 1)[1].split("  and also: ")[0]
        assert f"    look at:  {other.look}\n    hint:     {other.hint}" in block, full
        assert other.hint_for == other.mistake and other.hint
