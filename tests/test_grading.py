"""tinylm_checks.grading.fresh(): a submission that rebinds, monkeypatches or replaces what the checks
rely on earns nothing. Each scenario runs in its own interpreter (fresh() reloads the packages)."""
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow

WRONG = "def attention_scores(q, k):\n    return q @ k.transpose(-2, -1)\n"
RIGHT = "from tinylm_solutions.attention import attention_scores\n"
GRADE = textwrap.dedent("""
    import runpy
    try:
        runpy.run_module("tinylm_checks.grading")["fresh"]().check_attention_scores(attention_scores, seed=1)
    except Exception as e:  # in nbgrader any error scores the test cell 0
        print("VERDICT: fail", getattr(e, "mistake", None), type(e).__name__)
    else:
        print("VERDICT: pass")
""")

CHEATS = {
    "rebind the check": "check_attention_scores = lambda *a, **k: None\n",
    "patch the package": "import tinylm_checks\ntinylm_checks.check_attention_scores = lambda *a, **k: None\n"
                         "import tinylm_checks.attention\ntinylm_checks.attention.check_attention_scores = lambda *a, **k: None\n",
    "patch grading.fresh": "import types, tinylm_checks.grading\n"
                           "tinylm_checks.grading.fresh = lambda: types.SimpleNamespace(check_attention_scores=lambda *a, **k: None)\n",
    "replace sys.modules entry": "import sys, types\nfake = types.ModuleType('tinylm_checks')\n"
                                 "fake.check_attention_scores = lambda *a, **k: None\nsys.modules['tinylm_checks'] = fake\n"
                                 "sys.modules['tinylm_checks.attention'] = fake\n",
    "patch the reference": "import tinylm_solutions.attention as r\nr.attention_scores = attention_scores\n",
    "patch torch comparisons": "import torch\ntorch.allclose = lambda *a, **k: True\n"
                               "torch.testing.assert_close = lambda *a, **k: None\n"
                               "torch.Tensor.abs = lambda self: self * 0\ntorch.Tensor.__sub__ = lambda a, b: a * 0\n",
}


def verdict(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code + GRADE], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return next(line for line in proc.stdout.splitlines() if line.startswith("VERDICT"))


@pytest.mark.parametrize("cheat", CHEATS)
def test_wrong_code_with_a_cheat_still_fails(cheat):
    # Replacing the package in sys.modules makes the hidden test itself fail to import: 0 points too.
    expected = ("VERDICT: fail None ImportError" if cheat == "replace sys.modules entry"
                else "VERDICT: fail no_scaling CheckFailure")
    assert verdict(WRONG + CHEATS[cheat]) == expected


def test_right_code_still_passes_after_every_cheat():
    cheats = "".join(v for k, v in CHEATS.items() if k != "replace sys.modules entry")
    assert verdict(RIGHT + cheats) == "VERDICT: pass"


def test_a_lie_that_cannot_be_undone_is_reported():
    # fresh() cannot restore a patched builtin; its probes notice that comparisons lie and refuse.
    code = WRONG + textwrap.dedent("""
        import builtins, torch, tinylm_checks  # a notebook has imported these before
        real_float = float
        class LyingFloat(float):  # every tensor converts to 0.0, so every difference looks like zero
            def __new__(cls, x=0.0):
                return real_float.__new__(cls, 0.0 if hasattr(x, "dim") else x)
        builtins.float = LyingFloat
    """)
    assert verdict(code) == "VERDICT: fail None CheckFailure"


def test_restoring_leaves_an_untouched_torch_as_it_was():
    code = textwrap.dedent("""
        import torch
        from tinylm_checks import grading
        before = dict(torch.Tensor.__dict__), {n: getattr(torch, n) for n in grading.TORCH_FUNCTIONS}
        grading.restore_torch()
        after = dict(torch.Tensor.__dict__), {n: getattr(torch, n) for n in grading.TORCH_FUNCTIONS}
        print("VERDICT:", before == after)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "VERDICT: True" in proc.stdout, proc.stderr[-2000:]
