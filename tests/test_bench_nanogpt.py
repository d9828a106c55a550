"""benchmarks/bench_nanogpt.py's ``--ceiling`` turn: where inductor cannot compile, it says why and the benchmark
goes on (issue 5 of 5: "fall back cleanly, never crash")."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import sys, torch
sys.path.insert(0, "benchmarks")
import bench_nanogpt
data = torch.randint(65, (5000,))
turn = bench_nanogpt.compiled_turn(65, data, turn=2)
print("turn:", turn)
"""


@pytest.mark.slow
def test_without_a_cxx_compiler_the_compiled_turn_is_left_out_with_the_reason(tmp_path):
    env = {**os.environ, "CXX": str(tmp_path / "no-such-c++"), "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "cache"),
           "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[-1] == "turn: None"
    assert lines[-2].startswith("  torch.compile: unavailable here (") and "C++ compiler" in lines[-2]
