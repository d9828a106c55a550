"""The instructor's round trip, for real: nbgrader generate_assignment, autograde, generate_feedback,
export, in a temporary course directory that uses the repository's nbgrader_config.py: one course directory per
stage, so that the stages' round trips run on different workers (each stage's tests share one xdist group).

Submissions graded (scores read from the gradebook with nbgrader.api.Gradebook):
  perfect      the source notebook (solutions)                 -> full marks
  untouched    the release notebook as handed out               -> 0
  one_wrong    one exercise with a known mistake                -> exactly that exercise's points lost
  cheater      wrong code that rebinds/patches the checks       -> 0 for those exercises, full for the rest
  looping      an exercise that never ends (per-cell timeout)   -> that exercise's points lost, the rest kept
               (stages 01 and 02 only: the timeout costs 20 s per notebook)
  perfect_zh,  the Chinese notebook (TINYLM_LANG=zh make release), -> the same scores as perfect and one_wrong,
  one_wrong_zh solved, and with the same mistake                  with the grader's words in Chinese
               (stages 01 and 12 only: a mixed class, one gradebook)

Written answers (stage 12's markdown answer cells, the capstone's report.md cell) are graded by hand: autograding
scores none of them. An answer left as released gets 0 at once (nbgrader's checksum of the unchanged cell); any other
waits for the instructor (needs_manual_grade), and its points count in max_score, not in the autograded score.
"""
from __future__ import annotations

import csv
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from nbgrader_cli import nbgrader
from tinylm_checks._text import say
from tinylm_grading import registry
from tinylm_solutions import i18n

pytestmark = [pytest.mark.slow, pytest.mark.notebooks]

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import build_notebooks  # noqa: E402 - the Chinese notebooks are built, not committed

def _capstone_file(name: str) -> str:
    from tinylm_solutions.capstone import repo
    return repo()[name]


# Per graded stage: one exercise replaced by a known mistake (grade id of the solution cell -> new source),
# and the cheats: wrong code plus a way of making the visible check pass (grade id -> new source).
WRONG = {
    "00_setup": ("softmax", "import torch\n"
                 "def softmax(x):\n    e = torch.exp(x)  # no shift: overflows for large scores\n"
                 "    return e / e.sum(dim=-1, keepdim=True)\n"),
    "01_attention": ("attention_scores", "def attention_scores(q, k):\n    return q @ k.transpose(-2, -1)  # no scaling\n"),
    "02_multihead": ("merge_heads", "def merge_heads(x):\n    B, H, T, d_k = x.shape\n    return x.reshape(B, T, H * d_k)\n"),
    "03_masks": ("key_padding_mask", "import torch\n"
                 "def key_padding_mask(lengths, T, padding_side='right'):\n"
                 "    real = torch.arange(T)[None, :] <= lengths[:, None]  # one too many\n"
                 "    return real[:, None, None, :]\n"),
    "04_positions": ("sinusoidal_position_encoding", "import torch\n"
                     "def sinusoidal_position_encoding(max_len, d_model):\n"
                     "    pos = torch.arange(max_len)[:, None]\n"
                     "    angles = pos / 10000 ** (torch.arange(0, d_model, 2) / d_model)\n"
                     "    pe = torch.zeros(max_len, d_model)\n"
                     "    pe[:, 0::2] = torch.cos(angles)  # sin and cos swapped\n"
                     "    pe[:, 1::2] = torch.sin(angles)\n"
                     "    return pe\n"),
    "05_ffn": ("feed_forward", "class FeedForward(nn.Module):\n"
               "    def __init__(self, d_model, d_ff):\n"
               "        super().__init__()\n"
               "        self.linear1 = nn.Linear(d_model, d_ff)\n"
               "        self.linear2 = nn.Linear(d_ff, d_model)\n\n"
               "    def forward(self, x):\n"
               "        return self.linear2(torch.relu(self.linear1(x)))  # ReLU, not GELU\n"),
    "06_norm": ("layer_norm", "class LayerNorm(nn.Module):\n"
                "    def __init__(self, d_model, eps=1e-5):\n"
                "        super().__init__()\n"
                "        self.eps = eps\n"
                "        self.weight = nn.Parameter(torch.ones(d_model))\n"
                "        self.bias = nn.Parameter(torch.zeros(d_model))\n\n"
                "    def forward(self, x):\n"
                "        mean = x.mean(dim=-1, keepdim=True)\n"
                "        var = x.var(dim=-1, keepdim=True)  # unbiased: divides by D - 1\n"
                "        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias\n"),
    "07_block": ("transformer_block", "class TransformerBlock(nn.Module):\n"
                 "    def __init__(self, d_model, num_heads, d_ff, norm_first=True):\n"
                 "        super().__init__()\n"
                 "        self.norm_first = norm_first\n"
                 "        self.norm1 = LayerNorm(d_model)\n"
                 "        self.attn = MultiHeadSelfAttention(d_model, num_heads)\n"
                 "        self.norm2 = LayerNorm(d_model)\n"
                 "        self.ffn = FeedForward(d_model, d_ff)\n\n"
                 "    def forward(self, x, mask=None):\n"
                 "        if self.norm_first:\n"
                 "            x = self.norm1(x)  # the residual now adds the normalised tensor\n"
                 "            x = x + self.attn(x, mask)[0]\n"
                 "            x = self.norm2(x)\n"
                 "            x = x + self.ffn(x)\n"
                 "        else:\n"
                 "            x = self.norm1(x + self.attn(x, mask)[0])\n"
                 "            x = self.norm2(x + self.ffn(x))\n"
                 "        return x\n"),
    "08_lm": ("causal_lm_loss", "def causal_lm_loss(logits, labels):\n"
              "    V = logits.size(-1)\n"
              "    return F.cross_entropy(logits.reshape(-1, V), labels.reshape(-1))  # labels not shifted\n"),
    "09_training": ("train_step", "def train_step(model, batch, optimizer, max_grad_norm=1.0):\n"
                    "    x, y = batch\n"
                    "    model.train()\n"
                    "    optimizer.zero_grad()\n"
                    "    logits, _ = model(x)\n"
                    "    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))\n"
                    "    loss.backward()\n"
                    "    optimizer.step()\n"
                    "    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)  # too late\n"
                    "    return {'loss': loss.item(), 'grad_norm': float(grad_norm)}\n"),
    "10_generation": ("generate", "def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):\n"
                      "    was_training = model.training\n"
                      "    model.eval()\n"
                      "    with torch.no_grad():\n"
                      "        for _ in range(max_new_tokens):\n"
                      "            logits = model(idx[:, -model.max_seq_len:])[0][:, -1, :] * temperature  # multiplied\n"
                      "            if top_k is not None:\n"
                      "                kth = torch.topk(logits, top_k, dim=-1).values[:, [-1]]\n"
                      "                logits = logits.masked_fill(logits < kth, float('-inf'))\n"
                      "            probs = F.softmax(logits, dim=-1)\n"
                      "            idx = torch.cat((idx, torch.multinomial(probs, 1, generator=generator)), dim=1)\n"
                      "    model.train(was_training)\n"
                      "    return idx\n"),
    "11_ablations": ("fixed_causal_mask", "import torch\n"
                     "def fixed_causal_mask(T):\n"
                     "    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)  # sees the next token\n"),
    "12_report": ("flops_per_token", "def flops_per_token(config, seq_len):\n"
                  "    N = TinyLM(**config).get_num_params()\n"
                  "    return 2 * N + 2 * config['num_layers'] * seq_len * config['d_model']  # forward only\n"),
    "13_capstone": ("attention_tests", "%%writefile tiny-transformer/tests/test_attention.py\n"
                    "from model import scaled_dot_product_attention\n"
                    "import torch\n"
                    "def test_shape():  # shapes only: a wrong attention passes\n"
                    "    out, w = scaled_dot_product_attention(torch.randn(2, 5, 4), torch.randn(2, 5, 4), "
                    "torch.randn(2, 5, 4))\n"
                    "    assert out.shape == (2, 5, 4)\n"),
}


def rebinding(check: str, wrong: str) -> str:
    """Wrong code, then the check's name rebound to something that always passes."""
    return wrong + f"{check} = lambda *args, **kwargs: print('passed')  # rebinding the name\n"


def patching(module: str, check: str, wrong: str) -> str:
    """Wrong code, then the checks package and the reference patched to pass it."""
    return (wrong + f"import tinylm_checks, tinylm_checks.{module}\n"
            f"tinylm_checks.{check} = lambda *a, **k: None  # monkeypatching the package\n"
            f"tinylm_checks.{module}.{check} = lambda *a, **k: None\n")


CHEATS = {
    "00_setup": {"softmax": rebinding("check_softmax", WRONG["00_setup"][1])},
    "01_attention": {
        "attention_scores": rebinding("check_attention_scores", WRONG["01_attention"][1]),
        "causal_mask": patching("masks", "check_causal_mask", "import torch\n"
                                "def causal_mask(T):\n    return torch.ones(T, T, dtype=torch.bool).triu()\n")
        + "import tinylm_solutions.attention\ntinylm_solutions.attention.causal_mask = causal_mask  # patching the reference\n",
        "scaled_dot_product_attention": "import torch\n"
        "def scaled_dot_product_attention(q, k, v, mask=None):\n"
        "    w = torch.softmax(q @ k.transpose(-2, -1), dim=-2)\n    return w @ v, w\n"
        "torch.allclose = lambda *a, **k: True  # patching the comparisons\n"
        "torch.testing.assert_close = lambda *a, **k: None\n"
        "torch.Tensor.abs = lambda self: self * 0\n",
    },
    "02_multihead": {
        "split_heads": "import sys, types\n"
        "def split_heads(x, num_heads):\n    B, T, D = x.shape\n    return x.view(B, num_heads, T, D // num_heads)\n"
        "fake = types.ModuleType('tinylm_checks')\n"
        "fake.check_split_heads = lambda *a, **k: None\n"
        "sys.modules['tinylm_checks'] = fake  # replacing the module\n",
    },
    "04_positions": {
        "sinusoidal_position_encoding": patching("position", "check_sinusoidal_position_encoding",
                                                 WRONG["04_positions"][1]),
    },
    "05_ffn": {"feed_forward": rebinding("check_feed_forward", WRONG["05_ffn"][1])},
    "06_norm": {"layer_norm": patching("norm", "check_layer_norm", WRONG["06_norm"][1])
                + "import torch\ntorch.allclose = lambda *a, **k: True  # patching a comparison\n"},
    "07_block": {
        "transformer_block": rebinding("check_transformer_block", WRONG["07_block"][1]),
        "block_parameter_counts": patching("block", "check_block_parameter_counts",
                                           "def block_parameter_counts(block):\n"
                                           "    D = block.norm1.weight.numel()  # formulas, not counts\n"
                                           "    return {'attn': 4 * (D * D + D), 'ffn': 8 * D * D + 5 * D, "
                                           "'norms': 4 * D, 'total': 12 * D * D + 13 * D}\n"),
    },
    "08_lm": {
        "causal_lm_loss": rebinding("check_causal_lm_loss", WRONG["08_lm"][1]),
        "parameter_table": patching("model", "check_parameter_table",
                                    "def parameter_table(model):\n"
                                    "    D = model.norm.weight.numel()  # the rule, not the counts\n"
                                    "    V, L = model.token_emb.weight.shape[0], len(model.blocks)\n"
                                    "    return {'token_emb': V * D, 'pos_emb': 0, 'blocks': 12 * L * D * D, 'norm': 0, "
                                    "'lm_head': 0, 'total': 12 * L * D * D + V * D}\n"),
    },
    "09_training": {
        "train_step": rebinding("check_train_step", WRONG["09_training"][1]),
        "evaluate": patching("training", "check_evaluate", "import torch.nn.functional as F\n"
                             "def evaluate(model, batches):  # train mode, the mean of batch means\n"
                             "    means = [F.cross_entropy(model(x)[0].flatten(0, 1), y.flatten()).item() "
                             "for x, y in batches]\n"
                             "    return sum(means) / len(means)\n"),
    },
    "12_report": {"flops_per_token": patching("report", "check_flops_per_token", WRONG["12_report"][1])},
    "03_masks": {
        "key_padding_mask": rebinding("check_key_padding_mask", WRONG["03_masks"][1]),
        # the answers are installed next to the checks: import them, else read and run their file
        "combine_masks": "import pathlib, tinylm_solutions\n"
        "try:\n    from tinylm_solutions.masks import combine_masks\n"
        "except ImportError:\n"
        "    ns = {}\n"
        "    exec((pathlib.Path(tinylm_solutions.__file__).parent / 'masks.py').read_text(), ns)\n"
        "    combine_masks = ns['combine_masks']\n",
        "masked_softmax": patching("masks", "check_masked_softmax", "import torch\n"
                                   "def masked_softmax(scores, mask=None):\n"
                                   "    return torch.softmax(scores if mask is None else scores.masked_fill(~mask, -1e9), -1)\n"),
    },
    "10_generation": {"generate": rebinding("check_generate", WRONG["10_generation"][1].replace(
        "torch.multinomial(probs, 1, generator=generator)", "probs.argmax(-1, keepdim=True)"))},  # greedy
    "13_capstone": {
        "overfit_tests": rebinding("check_overfit_tests", "import pathlib\n"
                                   "pathlib.Path('tiny-transformer/tests/test_overfit_batch.py').write_text("
                                   "'def test_nothing():\\n    assert True\\n')\n"),
        # leaning on the course's answers, which the sandbox hides
        "capstone_train": "%%writefile tiny-transformer/train.py\n" + _capstone_file("train.py").replace(
            "from model import TinyLM", "from tinylm_solutions.model import TinyLM"),
        # the reference repository is installed next to the checks: hand its files in as the learner's
        "capstone_generate": "import pathlib, tinylm_solutions\n"
        "_answer = pathlib.Path(tinylm_solutions.__file__).parent / 'capstone'\n"
        "class Repository:\n"
        "    def __call__(self):\n"
        "        return {p.relative_to(_answer).as_posix(): p.read_text() for p in _answer.rglob('*') if p.is_file()}\n"
        "repo = Repository()  # reading the hidden answer's files\n",
    },
    "11_ablations": {
        "nan_loss_bug": rebinding("check_nan_loss_bug", "def nan_loss_bug():\n    return 'learning_rate_too_high'\n"),
        "stable_cross_entropy": patching("debugging", "check_stable_cross_entropy",
                                         "def stable_cross_entropy(logits, targets):\n"
                                         "    probs = logits.exp() / logits.exp().sum(dim=-1, keepdim=True)\n"
                                         "    return -probs.gather(-1, targets[:, None]).log().mean()\n"),
    },
}
ASSIGNMENTS = tuple(WRONG)  # autograded below
RELEASED = ASSIGNMENTS  # generated and checked for leaks
LOOPING = {"01_attention": "attention_scores", "02_multihead": "split_heads"}  # a cell that never ends
MIXED = ("01_attention", "12_report")  # Chinese learners in the same class (12: written answers in Chinese)


def test_every_graded_stage_is_round_tripped_with_the_registry_s_exercises():
    assert set(ASSIGNMENTS) == {s.name for s in registry.STAGES if registry.graded(s.name)}
    for a in ASSIGNMENTS:
        ids = {e.id for e in registry.checked(a)}
        assert WRONG[a][0] in ids and set(CHEATS[a]) <= ids and LOOPING.get(a, WRONG[a][0]) in ids




def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return nbgrader(*args, cwd=cwd, timeout=900,
                    TINYLM_QUICK="1")  # training cells take a few steps: no check depends on how long a model trained


def manual_points(nb) -> dict[str, float]:
    """grade_id of each written answer (an answer cell graded by hand: grade and solution) -> its points."""
    return {c.metadata.nbgrader["grade_id"]: c.metadata.nbgrader["points"] for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("grade") and c.metadata.nbgrader.get("solution")}


def solution_cells(nb) -> dict[str, nbformat.NotebookNode]:
    return {c.metadata.nbgrader["grade_id"]: c for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("solution")}


def test_points(nb) -> dict[str, float]:
    """grade_id of each autograded test cell -> its points."""
    return {c.metadata.nbgrader["grade_id"]: c.metadata.nbgrader["points"] for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("grade") and not c.metadata.nbgrader.get("solution")}


test_points.__test__ = False  # a helper, not a test


def submit(course: Path, student: str, assignment: str, nb) -> None:
    folder = course / "submitted" / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{assignment}.ipynb")


def with_cells(nb, replacements: dict[str, str]):
    """A copy of ``nb`` whose solution cells (by grade id) have the given sources."""
    nb = nbformat.from_dict(nb)
    cells = solution_cells(nb)
    for gid, source in replacements.items():
        cells[gid].source = source
    return nb


def graded_course(a: str, tmp_path_factory) -> Path:
    """A course directory with stage ``a`` generated and every submission autograded."""
    course = tmp_path_factory.mktemp(f"course-{a}")
    shutil.copy(ROOT / "nbgrader_config.py", course)
    shutil.copytree(ROOT / "notebooks" / a, course / "notebooks" / a)
    run("generate_assignment", a, "--force", cwd=course)
    source = nbformat.read(course / "notebooks" / a / f"{a}.ipynb", as_version=4)
    release = nbformat.read(course / "release" / a / f"{a}.ipynb", as_version=4)
    wrong_gid, wrong_source = WRONG[a]
    submit(course, "perfect", a, source)
    if a == "13_capstone":  # a learner's submission holds the repository the notebook wrote: grading writes its own
        stale = course / "submitted" / "perfect" / a / "tiny-transformer"
        stale.mkdir()
        (stale / "model.py").write_text("raise ImportError('a stale file from the learner's machine')\n")
    submit(course, "untouched", a, release)
    submit(course, "one_wrong", a, with_cells(source, {wrong_gid: wrong_source}))
    submit(course, "cheater", a, with_cells(source, CHEATS[a]))
    if a in LOOPING:
        # a cell that never ends, asleep: the cell timeout (120 s) must end it, and it leaves the CPU to the other
        # workers meanwhile (a busy loop burned 120 s of CPU per stage; test_tamper's m_loop covers a busy one)
        submit(course, "looping", a, with_cells(source, {LOOPING[a]: "import time\nwhile True:\n    time.sleep(1)\n"}))
    if a in MIXED:  # the Chinese source notebook: same cells, grade ids and points, Chinese markdown
        chinese = build_notebooks.build(ROOT / "course" / f"{a}.py", lang="zh")
        submit(course, "perfect_zh", a, chinese)
        submit(course, "one_wrong_zh", a, with_cells(chinese, {wrong_gid: wrong_source}))
    run("autograde", a, "--force", "--Execute.timeout=20", cwd=course)
    return course


def written(assignment: str) -> set[str]:
    """The grade ids of an assignment's written answers (graded by hand)."""
    return {e.test_id for e in registry.graded(assignment) if e.written}


def scores(course: Path, assignment: str, student: str) -> dict[str, float]:
    """The autograded cells' scores (written answers, graded by hand, are in manual_grades)."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook(assignment, assignment, student)
        return {g.name: g.score for g in nb.grades if g.name not in written(assignment)}


def manual_grades(course: Path, assignment: str, student: str) -> dict[str, tuple]:
    """Each written answer's (auto_score, needs_manual_grade) after autograding."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook(assignment, assignment, student)
        return {g.name: (g.auto_score, g.needs_manual_grade) for g in nb.grades if g.name in written(assignment)}


WRITTEN = tuple(a for a in ASSIGNMENTS if any(e.written for e in registry.graded(a)))  # stages with written answers


def source_nb(a: str):
    return nbformat.read(ROOT / "notebooks" / a / f"{a}.ipynb", as_version=4)


def lost(a: str, wrong) -> set[str]:
    """The test cells that score 0 when the exercises ``wrong`` are wrong: theirs, and those of the exercises
    built on them in the same notebook (the registry's ``uses``: the stage's reference is hidden while it is
    graded, so a notebook's later exercise uses the learner's own earlier one)."""
    return {e.test_id for e in registry.graded(a) if e.id in wrong or set(e.uses) & set(wrong)}


@pytest.fixture(scope="class")
def a(request) -> str:
    """The stage of the round trip class asking (its ``stage``)."""
    return request.cls.stage


@pytest.fixture(scope="class")
def course(a, tmp_path_factory) -> Path:
    return graded_course(a, tmp_path_factory)


class RoundTrip:
    """One stage's round trip; a ``TestStage<stage>`` class below per graded stage. A class is one unit of
    pytest-xdist's ``--dist loadscope``: each stage is graded once, on one worker, and the stages on several."""

    stage = ""

    def test_solutions_score_full_marks(self, course, a):
        assert scores(course, a, "perfect") == test_points(source_nb(a))

    def test_untouched_release_scores_zero(self, course, a):
        got = scores(course, a, "untouched")
        assert set(got) == set(test_points(source_nb(a))) and all(v == 0 for v in got.values()), got

    def test_one_known_mistake_loses_exactly_that_exercise(self, course, a):
        expected = {gid: (0 if gid in lost(a, [WRONG[a][0]]) else pts) for gid, pts in test_points(source_nb(a)).items()}
        assert scores(course, a, "one_wrong") == expected

    def test_cheating_earns_nothing(self, course, a):
        points = test_points(source_nb(a))
        cheated = lost(a, CHEATS[a])  # the verdict is computed outside the kernel: the rest stands
        expected = {gid: (0 if gid in cheated else pts) for gid, pts in points.items()}
        assert scores(course, a, "cheater") == expected

    def test_feedback_and_export(self, course, a):
        run("generate_feedback", a, "--force", "--student", "one_wrong", cwd=course)  # the one this test reads
        html = (course / "feedback" / "one_wrong" / a / f"{a}.html").read_text()
        assert "likely mistake" in html  # the check's diagnosis reaches the learner's feedback
        run("export", cwd=course)
        with open(course / "grades.csv", newline="") as f:
            rows = {(r["assignment"], r["student_id"]): r for r in csv.DictReader(f)}
        students = {p.name for p in (course / "submitted").iterdir()}
        assert set(rows) == {(a, s) for s in students}
        total = sum(test_points(source_nb(a)).values())  # written answers: in max_score, not yet scored
        assert total == sum(e.points for e in registry.graded(a) if not e.written)
        assert float(rows[(a, "perfect")]["score"]) == total
        assert float(rows[(a, "perfect")]["max_score"]) == total + sum(manual_points(source_nb(a)).values())
        assert float(rows[(a, "untouched")]["score"]) == 0.0

    def test_release_contains_no_solution_code(self, course, a):
        release = nbformat.read(course / "release" / a / f"{a}.ipynb", as_version=4)
        text = "\n".join(c.source for c in release.cells)
        for marker in ("BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS", "tinylm_checks.grading"):
            assert marker not in text
        source = source_nb(a)
        # the notebook's own given code (demos, the lines outside the solution spans) may share a line with a
        # solution (e.g. super().__init__()); a leak is a solution line the release has and the given code has not
        given = "\n".join(re.sub(r"### BEGIN SOLUTION\n.*?### END SOLUTION", "", c.source, flags=re.S)
                          for c in source.cells)
        for gid, cell in solution_cells(source).items():
            for span in re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", cell.source, re.S):
                for line in span.splitlines():
                    if len(line.strip()) > 12 and not line.strip().startswith("#") and line not in given:
                        assert line not in text, f"solution line of {gid} in the release: {line!r}"
        writes_markdown = lambda c: re.match(r"%%writefile\s+\S+\.md\n", c.source)  # noqa: E731 - report.md: text
        code_solutions = [c for c in solution_cells(source).values() if c.cell_type == "code" and not writes_markdown(c)]
        assert sum("raise NotImplementedError()" in c.source for c in release.cells) >= len(code_solutions)
        answers = {c.metadata.nbgrader["grade_id"]: c for c in release.cells
                   if c.metadata.get("nbgrader", {}).get("grade") and c.metadata.nbgrader.get("solution")}
        assert set(answers) == set(manual_points(source))  # each written answer: nbgrader's stub, not the model answer
        assert all(c.source == "YOUR ANSWER HERE" if c.cell_type == "markdown"
                   else "\nYOUR ANSWER HERE\n" in c.source and "raise" not in c.source if writes_markdown(c)
                   else "raise NotImplementedError()" in c.source for c in answers.values())
        assert not any(c.get("outputs") for c in release.cells if c.cell_type == "code")


class Mixed:
    def test_a_chinese_notebook_scores_as_the_english_one(self, course, a):
        assert scores(course, a, "perfect_zh") == scores(course, a, "perfect") == test_points(source_nb(a))
        assert scores(course, a, "one_wrong_zh") == scores(course, a, "one_wrong")
        assert manual_grades(course, a, "perfect_zh") == manual_grades(course, a, "perfect")

    def test_the_grader_speaks_the_notebook_s_language(self, course, a):
        graded = nbformat.read(course / "autograded" / "one_wrong_zh" / a / f"{a}.ipynb", as_version=4)
        english = nbformat.read(course / "autograded" / "one_wrong" / a / f"{a}.ipynb", as_version=4)
        wrong = registry.BY_ID[WRONG[a][0]].test_id

        def verdict(nb) -> str:
            cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == wrong)
            return "\n".join(o.get("evalue", "") + o.get("text", "") for o in cell.outputs)

        with i18n.using("zh"):
            assert say("core.label.mistake") in verdict(graded)
        assert say("core.label.mistake") in verdict(english) and not re.search(r"[\u4e00-\u9fff]", verdict(english))


class WrittenAnswers:
    def test_written_answers_are_left_to_the_instructor(self, course, a):
        """Autograding scores no written answer: one the learner wrote waits for the instructor; one left as
        released gets 0 at once. Their points are the notebook's manual points."""
        points = manual_points(source_nb(a))
        assert points == {e.id: e.points for e in registry.graded(a) if e.written}
        for student in ("perfect", "one_wrong", "cheater"):
            assert manual_grades(course, a, student) == {gid: (None, True) for gid in points}
        assert manual_grades(course, a, "untouched") == {gid: (0.0, False) for gid in points}


class Looping:
    def test_infinite_loop_is_ended_by_the_cell_timeout(self, course, a):
        looping = f"{LOOPING[a]}_check"
        expected = {gid: (0 if gid == looping else pts) for gid, pts in test_points(source_nb(a)).items()}
        assert scores(course, a, "looping") == expected


for _a in ASSIGNMENTS:
    _bases = (RoundTrip, *((WrittenAnswers,) if _a in WRITTEN else ()), *((Looping,) if _a in LOOPING else ()),
              *((Mixed,) if _a in MIXED else ()))
    globals()[f"TestStage{_a}"] = type(f"TestStage{_a}", _bases, {"stage": _a})
del _a, _bases


def test_a_hidden_check_in_another_form_is_computed_by_the_grader_or_fails(tmp_path):
    """The grader reads a hidden check line the way the build's lint does (``registry.hidden_calls``), so an
    instructor's notebook whose hidden line has another seed and other spacing is still graded outside the kernel
    (where the stand-in checks would pass anything), and one it cannot read scores 0: never a verdict of the kernel."""
    course = tmp_path / "course"
    course.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", course)
    a, odd = "00_setup", "00_setup_unreadable"
    hidden = registry.BY_ID["softmax"].hidden_check
    for name, line in ((a, hidden.replace("(softmax, seed=1)", "( softmax ,  seed = 2 )").replace(
            '["fresh"]()', '[ "fresh" ]( )')), (odd, hidden.replace("seed=1", "seed=SEED"))):
        nb = source_nb(a)
        check_cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "softmax_check")
        assert hidden in check_cell.source
        check_cell.source = check_cell.source.replace(hidden, f"SEED = 2\n{line}")
        (course / "notebooks" / name).mkdir(parents=True)
        nbformat.write(nb, course / "notebooks" / name / f"{name}.ipynb")
        run("generate_assignment", name, "--force", cwd=course)
    source = nbformat.read(course / "notebooks" / a / f"{a}.ipynb", as_version=4)
    submit(course, "perfect", a, source)
    if a == "13_capstone":  # a learner's submission holds the repository the notebook wrote: grading writes its own
        stale = course / "submitted" / "perfect" / a / "tiny-transformer"
        stale.mkdir()
        (stale / "model.py").write_text("raise ImportError('a stale file from the learner's machine')\n")
    submit(course, "one_wrong", a, with_cells(source, {WRONG[a][0]: WRONG[a][1]}))
    submit(course, "perfect", odd, nbformat.read(course / "notebooks" / odd / f"{odd}.ipynb", as_version=4))
    for name in (a, odd):
        run("autograde", name, "--force", cwd=course)

    def check_output(name, student):
        nb = nbformat.read(course / "autograded" / student / name / f"{name}.ipynb", as_version=4)
        cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "softmax_check")
        return "".join(o.get("text", "") + "\n".join(o.get("traceback", [])) for o in cell.outputs)

    assert scores(course, a, "perfect") == {"softmax_check": 1.0}
    assert scores(course, a, "one_wrong") == {"softmax_check": 0.0}
    assert "computed by the grader" in check_output(a, "perfect")
    assert "check_softmax failed" in check_output(a, "one_wrong") and "computed by the grader" in check_output(a, "one_wrong")
    assert scores(course, odd, "perfect") == {"softmax_check": 0.0}  # the right answer, but no readable check
    assert "HiddenCheckUnreadable" in check_output(odd, "perfect")
