"""Notebooks run at full length (not ``TINYLM_QUICK``) in one language, for the tests that quote what their cells say
about their runs: :func:`dumped` runs one whose last cell prints ``CLAIMS`` and a JSON of what the run shows
(tests/test_claims_09.py); :func:`debugging_lab` runs notebook 11's debugging lab (tests/test_claims_11_en.py,
tests/test_claims_11_zh.py)."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from tinylm_grading.kernel import SlicedPollKernelManager

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "course" / "11_ablations.py"
sys.path.insert(0, str(ROOT / "tools"))
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
