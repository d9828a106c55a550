"""How long the checks and the notebooks take, on this machine. Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/bench_checks.py            # every check: first call and warm median
    .venv/bin/python benchmarks/bench_checks.py --notebooks # also execute every source notebook (nbclient)

The course promises that no check takes over a second on a 2-core CPU; "first call" is what a
learner meets in a fresh kernel (it includes PyTorch's one-time warm-up of the operations used).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHECKS = {
    "check_softmax": "lambda x: torch.softmax(x, dim=-1)",
    "check_attention_scores": "ref.attention_scores",
    "check_scaled_dot_product_attention": "ref.scaled_dot_product_attention",
    "check_self_attention": "ref.SelfAttention",
    "check_split_heads": "ref.split_heads",
    "check_merge_heads": "ref.merge_heads",
    "check_multi_head_attention": "ref.MultiHeadSelfAttention",
    "check_causal_mask": "causal_mask",
}

FIRST_CALL = """
import time, torch, tinylm_checks
from tinylm_solutions import attention as ref
from tinylm_solutions.masks import causal_mask
obj = {obj}
t = time.perf_counter(); tinylm_checks.{name}(obj, quiet=True); print(time.perf_counter() - t)
"""


def first_call(name: str, obj: str) -> float:
    code = FIRST_CALL.format(name=name, obj=obj)
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def warm(name: str, obj: str, repeats: int = 20) -> float:
    import torch
    import tinylm_checks
    from tinylm_solutions import attention as ref
    from tinylm_solutions.masks import causal_mask
    namespace = {"torch": torch, "ref": ref, "causal_mask": causal_mask}
    fn, target = getattr(tinylm_checks, name), eval(obj, namespace)
    times = []
    for seed in range(repeats):
        t = time.perf_counter()
        fn(target, seed=seed, quiet=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def notebooks() -> None:
    import nbformat
    from nbclient import NotebookClient
    print(f"\n{'notebook':<40} {'seconds':>8}")
    for path in sorted((ROOT / "notebooks").glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        t = time.perf_counter()
        NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        print(f"{path.relative_to(ROOT).as_posix():<40} {time.perf_counter() - t:8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", action="store_true", help="also time every source notebook")
    args = parser.parse_args()
    print(f"{'check (on the reference)':<38} {'first call s':>12} {'warm median s':>14}")
    for name, obj in CHECKS.items():
        print(f"{name:<38} {first_call(name, obj):12.3f} {warm(name, obj):14.4f}")
    if args.notebooks:
        notebooks()


if __name__ == "__main__":
    main()
