"""Notebooks run at full length (not ``TINYLM_QUICK``) in one language, for the tests that quote what their cells say
about their runs: :func:`dumped` runs one whose last cell prints ``CLAIMS`` and a JSON of what the run shows
(tests/test_claims_09.py); :func:`debugging_lab` runs notebook 11's debugging lab (tests/test_claims_11_en.py,
tests/test_claims_11_zh.py)."""
from __future__ import annotations

import ast
import inspect
import json
import os
import re
import sys
import textwrap
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from tinylm_grading.kernel import SlicedPollKernelManager

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "course" / "11_ablations.py"
sys.path.insert(0, str(ROOT / "tools"))
import bilingual  # noqa: E402
import build_notebooks  # noqa: E402

HEAVY = ("residual_ablation(train_data", "norm_placement_sweep(train_data", "order_test(train_data",
         "plot_layer_grad_norms(", "plot_lr_sweep(", "plot_order_test(", 'record_run("11_ablations"')
DUMP = """import json
with torch.no_grad():
    _moved = (leaky.eval()(changed)[0] - leaky(probe_ids)[0]).abs().amax(-1)[0].tolist()
print("CLAIMS" + json.dumps({"V": V, "unigram": unigram, "healthy": healthy_hist["loss"], "leaky": leaky_hist["loss"],
      "copier": copier_hist["loss"], "uniform": uniform_hist["loss"], "shifted": shifted_hist["loss"], "probe": probe,
      "healthy_sample": greedy_sample(healthy), "leaky_sample": greedy_sample(leaky),
      "copier_sample": greedy_sample(copier, COPY_PROMPT), "prompt": PROMPT, "copy_prompt": COPY_PROMPT,
      "uniform_ratio": [entropy_ratio(w) for w in uniform.get_attention_weights()],
      "fixed_ratio": [entropy_ratio(w) for w in fixed.get_attention_weights()], "moved": _moved}))"""


def dumped(nb, lang: str, folder: Path) -> dict:
    """Execute ``nb`` (its last cell prints ``"CLAIMS"`` and a JSON object on one line) in ``folder`` with
    ``TINYLM_LANG=lang`` and its runs at full length; the JSON object."""
    saved = os.environ.copy()
    os.environ.pop("TINYLM_QUICK", None)
    os.environ.update(TINYLM_RUNS=str(folder / "runs"), TINYLM_LANG=lang)  # the kernel inherits it
    try:
        NotebookClient(nb, timeout=900, kernel_name="python3", kernel_manager_class=SlicedPollKernelManager,
                       resources={"metadata": {"path": str(folder)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    out = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    return json.loads(out.split("CLAIMS", 1)[1].splitlines()[0])


def debugging_lab(lang: str, folder: Path) -> dict:
    """Notebook 11's debugging lab (section 4) in ``lang`` ("en" or "zh"): its cells after the notebook's set-up cells
    (without the ablations of sections 1-3, which the tests run themselves), and ``DUMP``; its loss curves, samples,
    probes and attention entropies. A few seconds (English) to a minute (Chinese) of one core."""
    nb = build_notebooks.build(SOURCE, lang=lang)
    src = [c.source for c in nb.cells]
    start = next(i for i, s in enumerate(src) if "def lab_model(" in s)
    end = next(i for i, s in enumerate(src) if s.startswith("## 5."))
    setup = [c for c in nb.cells[:start] if c.cell_type == "code" and not any(h in c.source for h in HEAVY)]
    nb.cells = setup + nb.cells[start:end] + [nbformat.v4.new_code_cell(DUMP)]
    return dumped(nb, lang, folder)


# ---- what a run="zh" cell states and what the tests assert (tests/test_claims_09.py, tests/test_claims_11_zh.py)
STATED = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?![\d.])|(?<![\w.])\d+(?:\.\d+)?(?:e-?\d+)?")
"""A number as the prose writes it: 200,000 (grouped as Python prints it), 6.16, 3e-3."""


def stated(text: str) -> set[float]:
    """The values of the numbers of a markdown cell's prose (bilingual.numbers' parts of it: no code spans,
    formulas or links), 200,000 read as one number."""
    prose = bilingual.MATH.sub(" ", bilingual.CODE.sub(" ", bilingual.LINK.sub(" ", bilingual.FENCE.sub(" ", text))))
    return {float(m.group(0).replace(",", "")) for m in STATED.finditer(prose)}


def asserted(test) -> set[float]:
    """The numbers ``test``'s body asserts: the literals of its ``assert`` statements, and those of the assignments
    whose names they use (a table or a size the assert compares against), transitively; its docstring's do not
    count. So a number is covered only by a test that checks it."""
    body = ast.parse(textwrap.dedent(inspect.getsource(test))).body[0].body
    statements = [s for node in body for s in ast.walk(node) if isinstance(s, ast.stmt)]
    names = lambda node: {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}  # noqa: E731
    needed, parts = set(), []
    for s in statements:
        if isinstance(s, ast.Assert):
            needed |= names(s)
            parts.append(s)
    assigns = [s for s in statements if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign))]
    grew = True
    while grew:
        grew = False
        for s in assigns:
            targets = set().union(*(names(t) for t in (s.targets if isinstance(s, ast.Assign) else [s.target])))
            if s not in parts and (targets & needed):
                parts.append(s)
                needed |= names(s.value)
                grew = True
    return {float(n.value) for part in parts for n in ast.walk(part)
            if isinstance(n, ast.Constant) and type(n.value) in (int, float)}
