"""A check's failure in a real Jupyter kernel, as JupyterLab receives it (issue 41, item 1): the first failure of a
mistake is one rich display (HTML, with its plain text) and a one-line error, and neither holds the fix; the same
mistake again comes with its fix; ``show_fix()`` works without an import and prints the fix of the last failure.
(ipykernel asks an exception for its traceback twice: the failure is shown once.)"""
import nbclient
import nbformat
import pytest

pytestmark = pytest.mark.slow

WRONG = ("import torch\nfrom tinylm_checks import check_causal_mask\n"
         "def causal_mask(T):\n    return torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=1)\n")
CHECK = "check_causal_mask(causal_mask)"
FIX = "torch.tril(..., diagonal=0): the diagonal is the last allowed position"


def run(*sources: str, lang: str = "en") -> list[list[dict]]:
    """The outputs of each cell of a notebook of ``sources``, run in one kernel in the learner's language ``lang``."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    client = nbclient.NotebookClient(nb, kernel_name="python3", allow_errors=True, timeout=120)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TINYLM_LANG", lang)  # the kernel inherits it
        client.execute()
    return [c.outputs for c in nb.cells]


def shown(outputs) -> str:
    return "\n".join([o.get("data", {}).get("text/html", "") + o.get("data", {}).get("text/plain", "")
                      for o in outputs] + ["\n".join(o.get("traceback", [])) + o.get("text", "") for o in outputs])


@pytest.fixture(scope="module")
def outputs():
    return run(WRONG, CHECK, CHECK, "show_fix()")


def test_the_first_failure_is_one_display_and_a_headline_without_the_fix(outputs):
    first = outputs[1]
    assert [o.output_type for o in first] == ["display_data", "error"]
    assert set(first[0].data) == {"text/html", "text/plain"}
    assert first[1].traceback == ["\x1b[31mCheckFailure\x1b[0m: check_causal_mask failed: the mask is wrong"]
    text = shown(first)
    assert "likely mistake" in text and "look at" in text and "show the fix" in text
    assert "<details" in first[0].data["text/html"] and FIX in first[0].data["text/html"]  # in the closed fold
    assert FIX not in first[0].data["text/plain"] and FIX not in "".join(first[1].traceback)


def test_the_same_mistake_again_comes_with_its_fix(outputs):
    again = outputs[2]
    assert [o.output_type for o in again] == ["display_data", "error"]
    assert f"hint:     {FIX}" in again[0].data["text/plain"] and "<details" not in again[0].data["text/html"]


def test_show_fix_needs_no_import_and_prints_the_fix(outputs):
    assert [o.output_type for o in outputs[3]] == ["stream"]
    assert outputs[3][0].text == ("likely mistake: the mask lets position t see position t + 1 (tril with diagonal=1)"
                                  f"\n  the fix: {FIX}\n")


def test_show_fix_before_any_failure_says_there_is_none():
    [[out]] = run("from tinylm_checks import show_fix\nshow_fix()")
    assert out.text == "no check has failed with a named mistake yet in this kernel, so there is no fix to show\n"


def test_in_chinese():
    _, first, fix = run(WRONG, CHECK, "show_fix()", lang="zh")
    html = first[0].data["text/html"]
    assert "可能的错误</strong>：" in html and "看看</strong>：" in html and "看改法" in html
    assert "运行 show_fix()" in first[0].data["text/plain"]
    assert fix[0].text.startswith("可能的错误：") and "\n  改法：" in fix[0].text
