"""The README's figures come from the repo: each one it states is checked here against its source (the pins,
the measured size of .venv, the trainer's init, the grader's cell timeout, the recorded benchmark run)."""
import json
import re
import sys
from pathlib import Path

import pytest
from traitlets.config.loader import PyFileConfigLoader

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_names_both_test_commands_and_the_makefile_has_them():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for command in ("make test-fast", "make test "):
        assert command in README
    assert re.search(r"^test-fast:", makefile, re.M) and re.search(r"^test:", makefile, re.M)


def test_the_pins_the_readme_names_are_the_project_s():
    lines = (line.partition("#")[0].partition(";")[0].strip()
             for line in (ROOT / "constraints.txt").open(encoding="utf-8"))
    deps = dict(line.split("==") for line in lines if line)
    assert f"`torch=={deps['torch']}`" in README
    assert f"JupyterLab {'.'.join(deps['jupyterlab'].split('.')[:2])}" in README
    assert f"nbgrader {deps['nbgrader']}" in README


def test_the_size_of_the_venv_is_the_readme_s():
    venv = ROOT / ".venv"
    if Path(sys.prefix).resolve() != venv.resolve():
        pytest.skip("not running in the repository's .venv")
    stated = float(re.search(r"about ([\d.]+) GB of disk for `\.venv`", README).group(1))
    size = sum(p.stat().st_size for p in venv.rglob("*") if p.is_file() and not p.is_symlink()) / 1e9
    assert abs(size - stated) <= 0.1 * stated, f".venv holds {size:.2f} GB, the README says about {stated} GB"


def test_the_trainer_s_init_is_the_readme_s():
    from tinylm_solutions.model import small_init_std
    assert f"{small_init_std(128):.3f} at `d_model` 128" in README


def test_the_cell_timeout_is_the_grader_s():
    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    assert f"runs longer than {config.Execute.timeout} s" in README


def test_the_nanogpt_figures_are_the_recorded_run_s():
    """``benchmarks/bench_nanogpt.py --record benchmarks/results/nanogpt.json`` wrote the run the README quotes."""
    runs = json.loads((ROOT / "benchmarks" / "results" / "nanogpt.json").read_text(encoding="utf-8"))["runs"]
    ours, theirs = runs["tinylm"], runs["nanogpt"]
    stated = (f"validation loss of {ours['val_loss']:.2f} against nanoGPT's {theirs['val_loss']:.2f}, at a training "
              f"step {ours['ms_per_step'] / theirs['ms_per_step']:.2f}× nanoGPT's and a wall time "
              f"{ours['wall_s'] / theirs['wall_s']:.2f}× nanoGPT's, in the run recorded in "
              "`benchmarks/results/nanogpt.json`")
    assert stated in " ".join(README.split())
    run = json.loads((ROOT / "benchmarks" / "results" / "nanogpt_interleaved.json").read_text(encoding="utf-8"))
    steps = run["ms_per_step"]
    stated = (f"measured interleaved, in turns of 25 steps (`--interleaved`), its step takes "
              f"{steps['tinylm'] / steps['nanogpt']:.2f}× nanoGPT's, in the run recorded in "
              "`benchmarks/results/nanogpt_interleaved.json`")
    assert stated in " ".join(README.split())
    ceiling = (f"The same run (`--ceiling`) shows why: matrix products and attention, which nanoGPT's step computes "
               f"alike, take {run['products_share']:.0%} of the step, and the products run at the machine's peak "
               f"already ({run['gflops_step']:.0f} GFLOP/s at the feed-forward's shape, {run['gflops_large']:.0f} "
               f"GFLOP/s for 1024³), so with everything else free the step would take "
               f"{run['products_share'] * steps['tinylm'] / steps['nanogpt']:.2f}× nanoGPT's; compiled by "
               f"`torch.compile`, it took {steps['tinylm_compiled'] / steps['nanogpt']:.2f}× nanoGPT's, after a "
               f"first step (the compilation) of {run['compile_s']:.0f} s.")
    assert ceiling in " ".join(README.split())


def test_the_time_to_quality_figures_are_the_recorded_run_s():
    """Issue 5 of 5, item 2: the wall time at which each run first reports nanoGPT's final validation loss, from the
    record ``benchmarks/bench_nanogpt.py --record`` wrote; the faster recipe's settings are the record's."""
    record = json.loads((ROOT / "benchmarks" / "results" / "nanogpt.json").read_text(encoding="utf-8"))
    runs, fast = record["runs"], record["fast_recipe"]
    ours, quick, theirs = runs["tinylm"], runs["tinylm_fast"], runs["nanogpt"]
    step = next(s for (s, val), _ in zip(ours["evals"], ours["eval_s"]) if val <= record["target_val_loss"])
    nano_at_1000 = dict(theirs["evals"])[fast["iters"]]
    stated = (f"nanoGPT's final validation loss ({record['target_val_loss']:.4f}) is first reported by the reference "
              f"trainer {ours['to_quality_s']:.1f} s into its run ({ours['to_quality_s'] / theirs['wall_s']:.2f}× "
              f"nanoGPT's wall time, at its evaluation of step {step}), and by the same model on a recipe of its own "
              f"{quick['to_quality_s']:.1f} s into its run ({quick['to_quality_s'] / theirs['wall_s']:.2f}× nanoGPT's "
              f"wall time, the benchmark's \"faster recipe\"): nanoGPT's batch, context and optimizer settings, but "
              f"{fast['iters']} steps instead of 2000 and a peak learning rate of {fast['lr']:.0e} instead of 1e-3, "
              f"decaying to {fast['min_lr']:.0e}.").replace("e-03", "e-3").replace("e-04", "e-4")
    assert stated in " ".join(README.split())
    stated = (f"at step {fast['iters']} of the same run its validation loss is still {nano_at_1000:.2f}; a schedule "
              f"that ends at step {fast['iters']}, from a higher peak, reaches {quick['val_loss']:.2f} there.")
    assert stated in " ".join(README.split())
    assert quick["to_quality_s"] / theirs["wall_s"] <= 0.5  # the goal, in the recorded run


def test_the_grading_figures_are_the_recorded_runs_s():
    """The README's grading times are the last runs ``benchmarks/bench_class.py --record`` and
    ``benchmarks/bench_capstone.py --record`` kept (one learner's course and the run before it, a class at the capstone,
    the capstone's commands forked and in bubblewrap)."""
    def runs(name: str) -> list[dict]:
        return list(json.loads((ROOT / "benchmarks" / "results" / name).read_text(encoding="utf-8"))["runs"].values())

    course, before = runs("grading_course.json")[-1], runs("grading_course.json")[0]
    klass = runs("grading_class.json")[-1]
    capstone = runs("grading_capstone.json")[-1]
    bubblewrap = [run for run in runs("grading_capstone.json") if run.get("sandbox", "bubblewrap") == "bubblewrap"][-1]
    text = " ".join(README.split())
    stated = (f"one learner's whole course, {len(course['stages_s'])} notebooks, took {course['wall_s']:.1f} s with "
              f"`tinylm-autograde --workers 2`, {course['stages_s']['13_capstone']:.1f} s of it stage 13's notebook, "
              f"against {before['wall_s']:.1f} s and {before['stages_s']['13_capstone']:.1f} s when each kernel and each "
              "capstone command started bubblewrap and a new Python")
    assert stated in text, stated
    stated = (f"a class of {klass['learners']} learners at stage 13 took {klass['two_workers_s_per_learner']:.1f} s "
              f"per learner with 2 workers ({klass['two_workers_wall_s'] / 60:.0f} minutes in all), and "
              f"{klass['one_worker_s_per_learner']:.1f} s per learner with one (its first "
              f"{klass['one_worker_learners']} learners)")
    assert stated in text, stated
    assert klass["same_grades"] and "every learner's every cell scored as the one-worker run scored" in text
    assert capstone["sandbox"] == "forked" and course["grades"] == before["grades"]  # the same grades
    stated = (f"Stage 13's checks run {capstone['commands']} commands per grading, each in a sandbox of its own: forked "
              f"by a root grader from a process that imported PyTorch once, they took {capstone['wall_s']:.1f} s in "
              f"all, against {bubblewrap['wall_s']:.1f} s when each starts bubblewrap and a new Python that imports "
              f"PyTorch again ({bubblewrap['command_s']['import torch']:.2f} s of each")
    assert stated in text, stated
