"""Claims as tests, stage 09: notebook 09 run at full length (its 150 overfitting and 600 training steps, about 35 s;
the rest of the suite runs it under TINYLM_QUICK=1), and each number its text states read from what it printed.

The Chinese notebook trains on Tang poems from section 7 on (a data cell's twin, tools/bilingual.py), so its cells
there state the Chinese run's numbers (``run="zh"``): the ``test_zh_*`` tests run the Chinese notebook at full length
(about 70 s) and each quotes, in its docstring, the Chinese sentence it tests. Every number of those cells that their
English cells do not state is asserted by one of them (the last test: a number in its asserts, not only its docstring)."""
import math
import os
import re
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest
import torch
from nbclient import NotebookClient


pytestmark = [pytest.mark.slow, pytest.mark.notebooks]
ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "course" / "09_training.py"
sys.path.insert(0, str(ROOT / "tools"))
import bilingual  # noqa: E402
import build_notebooks  # noqa: E402
import notebook_runs  # noqa: E402


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
    """'about 110,000 parameters'; 'the validation perplexity is about 12, against 99 before training'. (Its 'only 600
    steps of training': test_the_run_is_the_full_one; a number of seconds would depend on the machine's load.)"""
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


# ================================================================================== the Chinese notebook (Tang poems)
DUMP = """import json
torch.manual_seed(0)
print("CLAIMS" + json.dumps({"V": len(chars), "corpus": CORPUS, "chars": len(text), "params": num_params,
      "d_model": config["d_model"], "val_loss": log["val_loss"][-1],
      "untrained_loss": evaluate(TinyLM(**config), val_batches), "grad_norm": log["grad_norm"],
      "rms": rms.tolist(), "steps": TRAIN_STEPS, "samples": samples, "prompts": PROMPTS, "lines": lines,
      "healthy": healthy, "before": before, "after": after, "causes": causes}))"""


@pytest.fixture(scope="module")
def zh(tmp_path_factory):
    """What the Chinese notebook's full run gives: the values its run="zh" cells speak of, dumped by one more cell."""
    folder = tmp_path_factory.mktemp("nb09zh")
    nb = build_notebooks.build(SOURCE, lang="zh")
    nb.cells.append(nbformat.v4.new_code_cell(DUMP))
    return notebook_runs.dumped(nb, "zh", folder)


def test_zh_the_run_is_on_the_tang_poems(zh):
    """"从这一节起，本笔记本改用唐诗来训练：取中文语料的前 200,000 个字符"."""
    assert zh["corpus"] == "zh" and zh["chars"] == 200_000 and zh["V"] == 3984


def test_zh_the_gradient_norm_panel(zh):
    """"开始时约 1.5，预热阶段大部分时间高于 1（前 50 步里有三分之二被裁剪）；第 51 步到第 300 步，它的中位数降到 0.72
    左右，被裁剪的约占五分之一；之后又回升到 1 上下，第 301–600 步约有一半被裁剪" (max_grad_norm 1.0); "在这次运行里，这只
    出现在后半段"."""
    g = torch.tensor(zh["grad_norm"])
    steps = lambda first, last: g[first - 1:last]  # noqa: E731  (steps first to last, counted from 1)
    clipped = lambda first, last: (steps(first, last) > 1.0).float().mean().item()  # noqa: E731
    assert len(g) == 600 and abs(steps(1, 5).mean().item() - 1.5) <= 0.1
    assert 0.55 <= clipped(1, 50) <= 0.75 and 0.65 <= steps(51, 300).median().item() <= 0.78
    assert 0.15 <= clipped(51, 300) <= 0.25 and 0.9 <= steps(301, 600).median().item() <= 1.1
    assert 0.4 <= clipped(301, 600) <= 0.65


def test_zh_the_activation_rms_panel(zh):
    """"在第 140 步左右达到约 0.8 的峰值，然后降到约 0.55"."""
    rms = torch.tensor(zh["rms"])
    assert abs(rms.argmax().item() + 1 - 140) <= 40 and 0.72 <= rms.max().item() <= 0.86 and 0.5 <= rms[-1].item() <= 0.6


def test_zh_the_model_and_its_samples(zh):
    """"模型约有 360,000 个参数（训练前打印过），其中七成在 token 嵌入（embedding）里：3,984 个字，每个字一个 64 维的
    向量，就是 254,976 个参数。只训练了 600 步，模型就学会了唐诗的格式：“作者《标题》”形式的标题行，用逗号隔开、以句号结尾的
    诗句，诗与诗之间的空行；但诗句还读不通（验证集困惑度约 200，训练前约 3,984，也就是 V）"."""
    embedding = zh["V"] * zh["d_model"]
    assert zh["d_model"] == 64 and embedding == 254_976 and abs(zh["params"] - 360_000) <= 5_000 and 0.68 <= embedding / zh["params"] <= 0.72
    assert zh["steps"] == 600  # how long it trained: in steps (its seconds depend on the machine and its load)
    assert abs(math.exp(zh["val_loss"]) - 200) <= 25 and abs(math.exp(zh["untrained_loss"]) / zh["V"] - 1) < 0.05
    for prompt, sample in zip(zh["prompts"], zh["samples"]):
        assert sample.startswith(prompt) and "\n\n" in sample
        assert re.search(r"\n[\u4e00-\u9fff]{2,4}《[^》\n]+》\n", sample)  # an author's title line
        verses = [line for line in sample.split("\n")[1:-1] if line and "《" not in line and "》" not in line]
        assert len(verses) >= 6 and sum("，" in v and v.endswith("。") for v in verses) >= 0.8 * len(verses)


def test_zh_the_checklist_lab(zh):
    """"健康配置的损失最后停在 0.05 左右，而不是 0：有些行开头一样，后面却不同（比如同一组诗里前后两首的标题，只差最后
    的“一”和“二”）[...] 有三个配置最后*低于*它 [...] 另外三个高于它，其中一个始终停在起点没动过", and after the repairs every
    setup trains like the healthy one (the English cell, which the Chinese translates)."""
    healthy = zh["healthy"][-1]
    assert 0.03 <= healthy <= 0.07
    assert "沈佺期《鼓吹曲辞 巫山高二首 一》" in zh["lines"] and "沈佺期《鼓吹曲辞 巫山高二首 二》" in zh["lines"]
    final = {name: losses[-1] for name, losses in zh["before"].items()}
    below = {zh["causes"][n] for n, loss in final.items() if loss < healthy}
    assert below == {"labels_not_shifted", "mask_sees_future", "padding_not_ignored"}
    above = [n for n, loss in final.items() if loss > healthy]
    assert len(above) == 3
    assert [abs(final[n] - zh["before"][n][0]) < 0.1 for n in above].count(True) == 1
    for losses in zh["after"].values():  # the same curve
        assert max(abs(a - b) for a, b in zip(losses, zh["healthy"], strict=True)) < 1e-5


def test_every_number_of_the_chinese_run_cells_is_asserted_by_a_test():
    """A run="zh" cell's numbers that its English cell does not state are the Chinese run's: each is asserted by a
    test_zh_* test here (a literal of its asserts, or of what they compare against: notebook_runs.asserted; its
    docstring, which quotes the sentence it tests, does not count)."""
    covered = set().union(*(notebook_runs.asserted(f) for name, f in globals().items() if name.startswith("test_zh_")))
    cells = jupytext.read(SOURCE).cells
    own = [(cells[i - 1], cell) for i, cell in enumerate(cells) if bilingual.own_numbers(cell)]
    assert len(own) == 3
    for english, chinese in own:
        missing = notebook_runs.stated(chinese.source) - notebook_runs.stated(english.source) - covered
        assert not missing, (sorted(missing), chinese.source[:60])
