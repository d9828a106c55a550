"""Issue 40, item 4: report.md is written in the learner's language, and the capstone's report template too.

Notebook 12's code cells are one code in both notebooks (tools/bilingual.py): their headings, table headers and notes
come from the ``report.*`` messages (:func:`tinylm_solutions.report.text`), so the Chinese notebook writes a Chinese
report. The test runs the notebook's code cells, as each language's notebook has them, on records of its own (nothing
is recomputed but three timings of a few steps), and reads the report.md they write.

The capstone's report.md (notebook 13, exercise 7) is a template in the learner's language: its headings are the
check's questions in that language and the release leaves a written-answer stub under each (no Python stub in
Markdown), and ``check_capstone_report`` takes either language's headings.
"""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from tinylm_solutions import i18n

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests"))
import build_notebooks  # noqa: E402
from test_zh_figures import RECORD, english_words  # noqa: E402

REPORT = ROOT / "course" / "12_report.py"
CONFIG = dict(vocab_size=40, max_seq_len=16, d_model=16, num_heads=2, num_layers=2, d_ff=32)
SECTIONS = {"en": ["Where the parameters are", "Overfitting one batch", "The training run", "Ablations",
                   "Compute and throughput", "The first bug I met", "Where the numbers come from"],
            "zh": ["参数在哪里", "在一个批次上过拟合", "训练过程", "消融实验", "计算量与吞吐量", "我遇到的第一个 bug",
                   "这些数字从哪里来"]}


def records(lang: str) -> dict[str, dict]:
    """A run of every record the report reads, as notebooks 09 and 11 save them."""
    evidence = {"en": "the loss fell to 0.1 at once", "zh": "损失一下子掉到了 0.1"}[lang]
    return {"09_overfit": {"losses": [3.7, 1.2, 0.05]},
            "09_train": {"history": {"loss": [3.7, 2.9, 2.5], "val_loss": [3.6, 2.7], "tokens_per_s": [9000, 9500]},
                         "config": {**CONFIG, "batch_size": 8, "block_size": 16, "steps": 3}, "peak_memory_mb": 312.0},
            "11_ablations": {**RECORD, "unigram_loss": 3.3},
            "11_first_bug": {"bug": "unshifted labels", "evidence": evidence}}


def run_report_cells(lang: str, folder: Path, monkeypatch) -> str:
    """Run notebook 12's code cells in ``lang`` (solutions in, checks and magics out) in ``folder``; report.md."""
    nb = build_notebooks.build(REPORT, lang=lang)
    runs = folder / "runs"
    runs.mkdir()
    for name, record in records(lang).items():
        (runs / f"{name}.json").write_text(json.dumps({"record": name, "time": "2026-12-05 06:00:00", **record}),
                                           encoding="utf-8")
    monkeypatch.setenv("TINYLM_RUNS", str(runs))
    monkeypatch.chdir(folder)
    namespace: dict = {}
    with i18n.using(lang):
        for cell in nb.cells:
            grading = cell.metadata.get("nbgrader", {})
            if cell.cell_type != "code" or cell.source.startswith("%") or grading.get("grade") and not grading.get("solution"):
                continue
            exec(compile(cell.source, f"12_report[{lang}]", "exec"), namespace)
    return (folder / "report.md").read_text(encoding="utf-8")


@pytest.fixture
def quiet_display(monkeypatch):
    import IPython.display

    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: None)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_notebook_12_writes_report_md_in_the_notebook_s_language(lang, tmp_path, monkeypatch, quiet_display):
    text = run_report_cells(lang, tmp_path, monkeypatch)
    heads = re.findall(r"^## (.+)$", text, re.M)
    assert heads == SECTIONS[lang]
    tables = [line for line in text.splitlines() if line.startswith("| ")]
    headers = [line for i, line in enumerate(text.splitlines()) if line.startswith("| ")
               and text.splitlines()[i + 1].startswith("|---")]
    assert len(headers) == 8 and len(tables) > 20
    if lang == "zh":
        assert text.startswith("# TinyLM：我的实验报告\n")
        assert "| 部分 | 参数量 | 占比（%） |" in text and "| 合计 |" in text
        assert "| 步数 | 第一步的损失 | 最终损失 | 最终验证集损失 | 验证集困惑度 | 每秒 token 数 |" in text
        assert "**unshifted labels**\n\n证据：损失一下子掉到了 0.1" in text
        links = re.sub(r"\]\([^)]*\.png\)", "]", text)  # the figures' file names are files, the alt text is Chinese
        assert "![参数在哪里](report_figures/parameters.png)" in text
        left = [w for w in english_words(links.replace("unshifted labels", "")) if w not in ("Kaplan", "bug")]
        assert left == [], english_words(links)  # a citation's name, and the word the Chinese course uses for a bug
    else:
        assert "| part | parameters | share % |" in text and "| total |" in text
        assert "| steps | first loss | final loss | final val loss | val perplexity | tokens/s |" in text
        assert re.search(r"Measured in training: 9,250 tokens/s, i\.e\. [\d.]+ GFLOP/s sustained; peak memory 312 MB\.",
                         text)
        assert not re.search(r"[\u4e00-\u9fff]", text)


def test_the_report_s_words_are_one_message_each_in_both_languages():
    from tinylm_solutions import report

    with i18n.using("en"):
        en = report.columns("part", "parameters", "share") + [report.text(f"section.{k}") for k in ("bug", "sources")]
    with i18n.using("zh"):
        zh = report.columns("part", "parameters", "share") + [report.text(f"section.{k}") for k in ("bug", "sources")]
    assert en == ["part", "parameters", "share %", "The first bug I met", "Where the numbers come from"]
    assert zh == ["部分", "参数量", "占比（%）", "我遇到的第一个 bug", "这些数字从哪里来"]
    with pytest.raises(KeyError):
        report.text("section.nothing")


QUESTIONS = {"en": ["How are the parameters distributed?", "Can the model overfit one small batch?",
                    "What happened in the ablations?", "Does the theoretical complexity match tokens/s?",
                    "What was the first error met, and what was the evidence?"],
             "zh": ["参数是怎么分布的？", "模型能过拟合一个小批次吗？", "消融实验中发生了什么？", "理论复杂度和 tokens/s 对得上吗？",
                    "遇到的第一个错误是什么，证据是什么？"]}
STUB = {"en": "YOUR ANSWER HERE", "zh": "在这里写下你的回答"}
TITLE = {"en": "Report", "zh": "报告"}


def template(lang: str) -> str:
    """The report cell of the learner's notebook 13 in ``lang``, as the course ships it."""
    path = ROOT / "tinylm_solutions" / "learner_notebooks" / lang / "13_capstone" / "13_capstone.ipynb"
    cells = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
             if c["metadata"].get("nbgrader", {}).get("grade_id") == "capstone_report"]
    assert len(cells) == 1
    return "".join(cells[0]["source"])


def filled(lang: str, answer: str) -> dict[str, str]:
    """The reference repository with a report.md of ``lang``'s headings, ``answer`` under each."""
    from tinylm_solutions.capstone import repo

    files = repo()
    files["report.md"] = f"# {TITLE[lang]}\n" + "".join(f"\n## {q}\n\n{answer}\n" for q in QUESTIONS[lang])
    return files


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_capstone_report_template_is_markdown_in_the_notebook_s_language(lang):
    assert template(lang) == ("%%writefile tiny-transformer/report.md\n" + f"# {TITLE[lang]}\n"
                              + "".join(f"\n## {q}\n\n{STUB[lang]}\n" for q in QUESTIONS[lang])).rstrip("\n")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_check_knows_the_template_in_either_language(lang):
    from tinylm_checks import CheckFailure, check_capstone_report
    from tinylm_solutions.capstone import repo

    files = {**repo(), "report.md": template(lang).partition("\n")[2]}
    for shown in ("en", "zh"):
        with i18n.using(shown), pytest.raises(CheckFailure) as failed:
            check_capstone_report(files)
        message = str(failed.value)
        assert {"en": "report.md is still the template", "zh": "report.md 还是模板"}[shown] in message
        assert message.count(STUB[lang]) == 2  # the problem and the hint name what to replace


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_check_takes_either_language_s_headings_and_says_so(lang, capsys):
    from tinylm_checks import CheckFailure, check_capstone_report

    answer = {"en": "The loss fell from 4.6 to 0.02 in 150 steps on one batch, so the model can learn it by heart.",
              "zh": "在一个批次上，损失在 150 步内从 4.6 降到 0.02，说明模型能把它背下来。"}
    for heads in ("en", "zh"):
        with i18n.using(lang):
            check_capstone_report(filled(heads, answer[heads]))
        assert {"en": "report.md answers the 5 questions", "zh": "report.md 回答了全部 5 个问题"}[lang] in capsys.readouterr().out
    files = filled("zh", answer["zh"])
    files["report.md"] = files["report.md"].replace("## 消融实验中发生了什么？", "## 消融实验")
    with i18n.using(lang), pytest.raises(CheckFailure) as failed:
        check_capstone_report(files)
    hint = {"en": "in English or in Chinese (this one: '## What happened in the ablations?' or '## 消融实验中发生了什么？')",
            "zh": "中文或英文都可以（这一个是“## 消融实验中发生了什么？”或“## What happened in the ablations?”）"}[lang]
    assert hint in str(failed.value)


def test_a_markdown_file_s_twin_is_text_with_the_english_s_headings_and_markers():
    import bilingual

    english = "%%writefile r.md\n# Report\n\n## Why?\n\n### BEGIN SOLUTION\nBecause.\n### END SOLUTION\n"
    chinese = "%%writefile r.md\n# 报告\n\n## 为什么？\n\n### BEGIN SOLUTION\n因为。\n### END SOLUTION\n"
    assert bilingual.code_differences(english, chinese) is None
    assert "headings differ" in bilingual.code_differences(english, chinese.replace("## 为什么", "### 为什么"))
    assert "markers differ" in bilingual.code_differences(english, chinese.replace("### END SOLUTION\n", ""))
    assert "no Python file" in bilingual.code_differences(english.replace("r.md", "r.txt"), chinese.replace("r.md", "r.txt"))
