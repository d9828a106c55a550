"""Kinds of failure message that mislead, ruled out across every check (issue 40, item 2): a rule for the family,
tested on every failure the wrong implementations of ``tests/mutants`` draw from the checks."""
import functools
import keyword
import re
from pathlib import Path

import pytest
import torch

from tinylm_checks import CheckFailure, _text
from tinylm_checks.failure import reads_alike
from tinylm_solutions import i18n

from mutants import MULTI, ROWS

CHECKS = Path(_text.__file__).parent
COURSE = CHECKS.parent / "course"
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


@pytest.mark.slow  # 818 check runs (50 s on 2 cores); in English, tests/test_checks_mutants.py asserts it of each row
@pytest.mark.parametrize("check, mutant", list(_failures()))
def test_no_failure_shows_expected_and_got_that_read_alike_in_chinese(check, mutant):
    """Every failure of every wrong implementation, and each further slip it names, says what differs in Chinese
    too (English: test_check_fails_mutant_with_exact_diagnosis and test_independent_slips_are_named_in_one_report)."""
    try:
        with i18n.using("zh"):
            check(mutant)
    except CheckFailure as e:
        for f in [e, *e.also]:
            assert not reads_alike(f.expected, f.got), str(e)
    else:
        pytest.fail(f"{check.__name__} passed {mutant}")


TIME_LIMIT = re.compile(r"timed out|time limit|ran past|out of time|stopped after", re.IGNORECASE)


@pytest.mark.parametrize("key", sorted(k for k, v in _text.TEXT.items() if TIME_LIMIT.search(v)))
def test_a_time_limit_is_named_with_its_value(key):
    """A message that says a limit stopped something names it as a time limit and gives its value, in seconds
    (issue 40: a test that ran past its 300 s limit was reported as failing on a correct model.py)."""
    assert "seconds" in _text.fields(_text.TEXT[key]) and " s" in _text.TEXT[key], _text.TEXT[key]


CONSTANT = re.compile(r"(?<![\w.'])([A-Z][A-Z0-9_]{2,})\b(?![(=])")
"""A name in capitals (OVERFIT_CHECKLIST, BUG_NAMES), as a message quotes a notebook's constant."""
WORDS = {"AND", "ANY", "ASCII", "CDF", "CPU", "ELU", "FFN", "GEGLU", "GELU", "GLU", "GPT", "LTD", "RMS", "SGD",
         "UNK", "UTF", "YAML"}
"""Words in capitals the messages use that are no names: acronyms, the AND of masks, <UNK>, L T D."""
NOT_A_NOTEBOOK_S = {"grading", "client", "environment", "lab", "claims", "core", "terms"}  # the instructor's words,
# environment variables (LEARNER_VENV, TINYLM_GRADEBOOK), and texts of no one check's notebook


@functools.cache
def _notebook_names(module: str) -> set[str]:
    """The names the notebooks that call the checks of ``tinylm_checks.<module>`` define (assigned, imported, a def
    or class), read from their sources in course/."""
    checks = set(re.findall(r"\b(check_\w+)", (CHECKS / f"{module}.py").read_text(encoding="utf-8")))
    names = set()
    for source in sorted(COURSE.glob("[0-9][0-9]_*.py")):
        text = source.read_text(encoding="utf-8")
        if any(re.search(rf"\b{c}\(", text) for c in checks):
            names |= set(re.findall(r"^\s*(?:self\.)?(\w+)\s*(?::[^=\n]*)?=[^=]", text, re.M))
            names |= set(re.findall(r"^\s*(?:def|class)\s+(\w+)", text, re.M))
            for group in re.findall(r"^\s*from\s+\S+\s+import\s+\(?([^)]*?)\)?\s*$", text, re.M | re.S):
                names |= set(re.findall(r"\w+", group))
            names |= set(re.findall(r"self\.(\w+)\s*=", text))
    return names


def _quoted_names():
    """(module, key, name) of every name a message of a notebook's checks quotes, in English or in Chinese."""
    for key in sorted(_text.TEXT):
        module = _text.ORIGIN[key]
        if module in NOT_A_NOTEBOOK_S:
            continue
        names = set()
        for lang in ("en", "zh"):
            with i18n.using(lang):
                text = _text.text(key)
            names |= set(CONSTANT.findall(text)) - WORDS | set(re.findall(r"`([A-Za-z_]\w*)`", text))
        for name in sorted(names):
            yield pytest.param(module, key, name, id=f"{key}-{name}")


@functools.cache
def _known_api() -> set[str]:
    """Python's keywords, and the attributes the course's own classes set (``self.W_Q = ...`` in tinylm_solutions:
    a learner's notebook imports those classes)."""
    names = set(keyword.kwlist)
    for source in sorted((CHECKS.parent / "tinylm_solutions").glob("*.py")):
        names |= set(re.findall(r"self\.(\w+)\s*(?::[^=\n]*)?=[^=]", source.read_text(encoding="utf-8")))
    return names


@pytest.mark.parametrize("module, key, name", list(_quoted_names()))
def test_every_name_a_message_quotes_exists_where_the_learner_is(module, key, name):
    """A constant (OVERFIT_CHECKLIST, BUG_NAMES) or a name in backticks that a check's message tells the learner to
    use is defined in the notebook that runs the check, or is a known API (issue 40: check_overfit_checklist said
    CHECKLIST, where the notebook's name is OVERFIT_CHECKLIST)."""
    assert name in _notebook_names(module) | _known_api(), \
        f"{key} quotes {name}, which the notebooks of tinylm_checks.{module} do not define"


def test_a_softmax_over_the_queries_keeps_every_shape():
    """Notebook 13, exercise 2, hint 2 and the mistake tests_miss_softmax_over_queries: the wrong axis keeps the
    shapes, with T_q != T_k too (the hint used to say it "cannot even have the right shape"), so only values catch
    it."""
    q, k, v = torch.randn(2, 4, 3), torch.randn(2, 6, 3), torch.randn(2, 6, 5)
    weights = torch.softmax(q @ k.transpose(-2, -1) / 3 ** 0.5, dim=-2)
    assert weights.shape == (2, 4, 6) and (weights @ v).shape == (2, 4, 5)
    assert not torch.allclose(weights.sum(-1), torch.ones(2, 4))


@pytest.mark.slow  # two pytest processes
def test_the_capstone_tests_run_with_python_m_pytest_not_plain_pytest(tmp_path):
    """Notebook 13, section 2: "run them with `python -m pytest` in the repository's root, which puts that folder on
    the import path (plain `pytest` does not, and cannot import `model`)" (it used to say only that pytest runs them
    from the root, and plain `pytest` fails there)."""
    import os
    import subprocess
    import sys
    source = (COURSE / "13_capstone.py").read_text(encoding="utf-8")
    assert "run them with `python -m pytest` in the repository's root" in source.replace("\n# ", " ")
    (tmp_path / "tests").mkdir()
    (tmp_path / "model.py").write_text("def answer():\n    return 42\n")
    (tmp_path / "tests" / "test_answer.py").write_text("from model import answer\n\n\ndef test_answer():\n"
                                                       "    assert answer() == 42\n")
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTHONPATH", None)
    run = lambda *args: subprocess.run([*args, "-q", "-p", "no:cacheprovider"], cwd=tmp_path, env=env,  # noqa: E731
                                       capture_output=True, text=True)
    assert run(sys.executable, "-m", "pytest").returncode == 0
    plain = run(str(Path(sys.executable).with_name("pytest")))
    assert plain.returncode != 0 and "No module named 'model'" in plain.stdout, plain.stdout


def _natural_checklist(setup):
    """A learner's overfit_checklist whose mask probe reads the mask as notebook 09 describes it,
    ``torch.ones(T, T).tril(diagonal=model.mask_diagonal)`` (the other items: the course's probes)."""
    from tinylm_checks import OVERFIT_CHECKLIST
    from tinylm_solutions import checklist as ref
    T = setup.x.size(1)
    for item in OVERFIT_CHECKLIST:
        if item == "mask_sees_future":
            mask = torch.ones(T, T, dtype=torch.bool).tril(diagonal=setup.model.mask_diagonal)
            ok = torch.equal(mask, torch.ones(T, T, dtype=torch.bool).tril())
        else:
            ok = getattr(ref, ref.PROBES[item])(setup)
        if not ok:
            return item
    return None


@pytest.mark.slow  # a whole check_overfit_checklist run: 9 s
def test_every_setup_the_checklist_check_builds_is_one_the_notebook_describes():
    """A setup a check builds is one the learner can build too: every variant of every bug has a mask_diagonal the
    notebook's mask, tril(diagonal=mask_diagonal), takes (issue 40: "no mask" was mask_diagonal=None, which crashed
    this natural checklist, and no cell of the notebook could build it), and the natural checklist passes."""
    from tinylm_checks import OVERFIT_CHECKLIST, check_overfit_checklist
    from tinylm_checks.checklist import VARIANTS
    from tinylm_checks.probes import overfit_setup
    ids = torch.randint(11, (3, 9), generator=torch.Generator().manual_seed(0))
    for item in OVERFIT_CHECKLIST:
        for variant in range(VARIANTS[item]):
            diagonal = overfit_setup(ids, 11, 12, {item: variant}).model.mask_diagonal
            assert type(diagonal) is int, (item, variant, diagonal)
    check_overfit_checklist(_natural_checklist, quiet=True)
