"""The Chinese solution notebooks whose code differs from the English: those with a data cell's Chinese twin (the text
they train on, their prompts; tools/bilingual.py). nbval executes the English notebooks, whose other code cells the
Chinese share (tests/test_i18n.py); this runs the rest, as the Chinese learner runs it (TINYLM_LANG=zh), with
TINYLM_QUICK=1's few training steps, as nbval runs the English."""
import shutil
import sys
from pathlib import Path

import jupytext
import pytest
from nbclient import NotebookClient

from tinylm_grading.kernel import SlicedPollKernelManager

pytestmark = [pytest.mark.slow, pytest.mark.notebooks]
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import bilingual  # noqa: E402
import build_notebooks  # noqa: E402


def data_twins(source: Path) -> list[str]:
    """The data cells' Chinese twins of a source (a code cell's other twins only translate its comments)."""
    return [c.source for c in jupytext.read(source).cells
            if c.cell_type == "code" and bilingual.is_twin(c) and bilingual.data_names(c.source)]


WITH_DATA_TWINS = [source for source in sorted((ROOT / "course").glob("[0-9][0-9]_*.py")) if data_twins(source)]


def test_the_notebooks_with_a_data_twin_are_those_that_train_on_chinese_text():
    """09-11 train on Chinese text and continue Chinese prompts; 13 writes the learner's README from a template in
    the learner's language."""
    assert [source.stem for source in WITH_DATA_TWINS] == ["09_training", "10_generation", "11_ablations",
                                                           "13_capstone"]


@pytest.mark.parametrize("source", WITH_DATA_TWINS, ids=lambda p: p.stem)
def test_the_chinese_notebook_runs_its_own_data(source, tmp_path, monkeypatch):
    nb = build_notebooks.build(source, lang="zh")
    twins = data_twins(source)
    (data,) = [c for c in nb.cells if c.cell_type == "code" and c.source in twins]  # in the English cell's place
    folder = tmp_path / source.stem
    shutil.copytree(ROOT / "notebooks" / source.stem, folder)
    monkeypatch.setenv("TINYLM_LANG", "zh")
    monkeypatch.setenv("TINYLM_QUICK", "1")
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                   kernel_manager_class=SlicedPollKernelManager, resources={"metadata": {"path": str(folder)}}).execute()
    errors = [(i, o.ename, o.evalue) for i, c in enumerate(nb.cells) if c.cell_type == "code"
              and "raises-exception" not in c.metadata.get("tags", []) for o in c.get("outputs", [])
              if o.output_type == "error"]
    assert errors == []
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    names: dict = {}
    exec(data.source, {"corpus": lambda *a, **k: ""}, names)
    if "README" in names:  # the capstone: the README written from the learner's run is the Chinese template's
        readme = (folder / "tiny-transformer" / "README.md").read_text(encoding="utf-8")
        assert readme.startswith(names["README"].split("{")[0]) and "## 结果" in readme and "{" not in readme
        return
    prompts = names.get("PROMPTS") or [names["PROMPT"]]
    assert all(f"'{prompt}" in printed for prompt in prompts)  # the samples continue the Chinese prompts
