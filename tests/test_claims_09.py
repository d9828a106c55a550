"""Claims as tests, stage 09: notebook 09 run at full length (its 150 overfitting and 600 training steps, about 35 s;
the rest of the suite runs it under TINYLM_QUICK=1), and each number its text states read from what it printed."""
import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = [pytest.mark.slow, pytest.mark.notebooks]
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nb09")
    nb = nbformat.read(ROOT / "notebooks" / "09_training" / "09_training.ipynb", as_version=4)
    env = {k: v for k, v in os.environ.items() if k != "TINYLM_QUICK"}
    env["TINYLM_RUNS"] = str(folder / "runs")
    saved = os.environ.copy()
    os.environ.clear()
    os.environ.update(env)  # the kernel inherits it
    try:
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return "".join(o["text"] for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                   if o.get("output_type") == "stream" and o.get("name") == "stdout")


def number(pattern: str, text: str) -> list[float]:
    match = re.search(pattern, text)
    assert match, pattern
    return [float(g.replace(",", "")) for g in match.groups()]


def test_the_run_is_the_full_one(printed):
    assert "QUICK = False: 150 overfitting steps, 600 training steps, 150 per lab run" in printed


def test_overfitting_one_batch(printed):
    """'the loss must fall from ln V ≈ 4.6 towards 0'; 'the overfitted model's perplexity (about 725) is far above
    V = 99'."""
    first, ln_v, last = number(r"loss: ([\d.]+) at step 1 \(ln V = ([\d.]+)\), ([\d.]+) after 150 steps", printed)
    assert abs(first - ln_v) < 0.05 and ln_v == pytest.approx(4.6, abs=0.01) and last < 0.05
    (overfit,) = number(r"overfitted on one batch: validation loss [\d.]+, perplexity +([\d.]+)", printed)
    assert 700 < overfit < 750


def test_the_training_run(printed):
    """'about 110 000 parameters'; 'the validation perplexity is about 12, against 99 before training'."""
    (params,) = number(r"([\d,]+) parameters", printed)
    assert 105_000 < params < 115_000
    (ppl,) = number(r"validation loss [\d.]+, perplexity ([\d.]+) \(untrained", printed)
    assert 11 < ppl < 13


def test_the_gradient_norm_panel(printed):
    """'two thirds of the first 50 steps are clipped', '4% clipped' to step 300, 'more than half of steps 301-450 and
    nearly all of steps 451-600 are clipped'."""
    share = {span: number(rf"steps +{span}: median gradient norm [\d.]+, +(\d+)% of the steps clipped", printed)[0]
             for span in ("1- 50", "51-300", "301-450", "451-600")}
    assert 60 <= share["1- 50"] <= 72 and share["51-300"] <= 8 and 50 < share["301-450"] < 75 and share["451-600"] >= 95


def test_the_activation_rms_panel(printed):
    """'peaks at about 1.1 around step 240, then falls to about 0.65'."""
    peak, step, end = number(r"activation RMS: peak ([\d.]+) at step (\d+), ([\d.]+) at the end", printed)
    assert 1.0 <= peak <= 1.2 and 200 <= step <= 280 and 0.6 <= end <= 0.7


def test_the_checklist_lab(printed):
    """Section 8: "The healthy run ends near 0.08 ... Three setups end *below* it ... Three end above it, and one of
    those never leaves its start", and after the repairs "every repaired setup now trains like the healthy one: ...
    the same curve"; the three below are the labels, the mask and the padding ("the worst bugs of the six")."""
    import re
    (healthy,) = number(r"healthy: ([\d.]+) after 150 steps", printed)
    assert 0.05 <= healthy <= 0.11
    final = {name: float(loss) for name, loss in re.findall(r"^([A-F]): ([\d.]+)$", printed, re.M)}
    causes = dict(re.findall(r"^([A-F]): (\w+)  \(final loss", printed, re.M))
    assert len(final) == 6 and len(causes) == 6
    below = {causes[n] for n, loss in final.items() if loss < healthy}
    assert below == {"labels_not_shifted", "mask_sees_future", "padding_not_ignored"}
    above = [n for n, loss in final.items() if loss > healthy]
    assert len(above) == 3
    assert sum(final[n] > 4.0 for n in above) == 1  # the one that never leaves its start (ln 100 = 4.6)
    after = re.findall(r"^[A-F]: \w+ +[\d.]+ -> ([\d.]+)   checklist now: None$", printed, re.M)
    assert after == [f"{healthy:.3f}"] * 6
