"""tinylm-train and tinylm-generate as a user runs them: settings from the package's YAML, a --config file and
the command line; a corpus given by path; checkpoints and an exact --resume; one clear line for bad input."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tinylm_solutions.cli import generate_main, train_main
from tinylm_solutions.model import TinyLM

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
SMALL = ["--d-model", "16", "--num-heads", "2", "--num-layers", "1", "--block-size", "16", "--batch-size", "4",
         "--max-chars", "6000", "--sample-tokens", "5", "--no-progress"]


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the same sums in the same order: a resumed run equals an unbroken one bit for bit
    yield
    torch.set_num_threads(threads)


def error_line(capsys, prog: str) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{prog}: error: "), err
    return err[0]


def test_train_writes_a_checkpoint_that_generate_reads(capsys, tmp_path):
    ckpt = tmp_path / "run.pt"
    assert train_main([*SMALL, "--steps", "4", "--eval-interval", "2", "--checkpoint", str(ckpt)]) == 0
    out = capsys.readouterr().out
    assert "val perplexity" in out and "sample:" in out
    saved = torch.load(ckpt, weights_only=True)
    assert saved["step"] == 4 and saved["history"]["val_step"] == [2, 4]
    model = TinyLM(**saved["model_config"])
    model.load_state_dict(saved["model"])
    assert model.lm_head.weight is model.token_emb.weight
    assert generate_main(["--checkpoint", str(ckpt), "--prompt", "The ", "--tokens", "7"]) == 0
    text = capsys.readouterr().out.rstrip("\n")
    assert text.startswith("The ") and len(text) == 4 + 7


def test_resume_continues_exactly_where_the_run_stopped(tmp_path):
    straight, broken = tmp_path / "straight.pt", tmp_path / "broken.pt"
    assert train_main([*SMALL, "--steps", "6", "--eval-interval", "3", "--checkpoint", str(straight)]) == 0
    assert train_main([*SMALL, "--steps", "3", "--eval-interval", "3", "--checkpoint", str(broken)]) == 0
    assert train_main([*SMALL, "--steps", "6", "--eval-interval", "3", "--checkpoint", str(broken), "--resume"]) == 0
    a, b = torch.load(straight, weights_only=True), torch.load(broken, weights_only=True)
    assert a["step"] == b["step"] == 6
    assert a["history"]["loss"] == b["history"]["loss"]  # the same batches, in the same order
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])


def test_a_config_file_and_the_command_line_override_the_defaults(capsys, tmp_path):
    config = tmp_path / "small.yaml"
    config.write_text("d_model: 24\nnum_heads: 3\nsteps: 2\n")
    ckpt = tmp_path / "run.pt"
    assert train_main([*SMALL[2:], "--config", str(config), "--num-heads", "4", "--d-model", "24",
                       "--checkpoint", str(ckpt)]) == 0
    saved = torch.load(ckpt, weights_only=True)
    assert saved["model_config"]["d_model"] == 24 and saved["model_config"]["num_heads"] == 4
    assert saved["settings"]["steps"] == 2


def test_a_corpus_file_is_trained_on(capsys, tmp_path):
    corpus = tmp_path / "poem.txt"
    corpus.write_text("Ünïcödé lines, ünïcödé words.\n" * 80, encoding="utf-8")
    assert train_main([*SMALL, "--steps", "2", "--corpus", str(corpus)]) == 0
    assert "vocab 19" in capsys.readouterr().out  # the distinct characters of that text


@pytest.mark.parametrize("case", ["missing", "not_utf8", "empty", "too_short", "unknown_key", "wrong_type",
                                  "resume_without_checkpoint", "other_vocabulary", "other_model", "not_a_checkpoint",
                                  "bad_schedule", "bad_flag", "bad_init_std"])
def test_bad_input_gives_one_line_and_status_2(capsys, tmp_path, case):
    corpus, config, ckpt = tmp_path / "c.txt", tmp_path / "c.yaml", tmp_path / "c.pt"
    args = {
        "missing": ["--corpus", str(tmp_path / "nope.txt")],
        "not_utf8": ["--corpus", str(corpus)],
        "empty": ["--corpus", str(corpus)],
        "too_short": ["--corpus", str(corpus)],
        "unknown_key": ["--config", str(config)],
        "wrong_type": ["--config", str(config)],
        "resume_without_checkpoint": ["--resume"],
        "other_vocabulary": ["--checkpoint", str(ckpt), "--resume", "--max-chars", "3000"],
        "other_model": ["--checkpoint", str(ckpt), "--resume", "--d-model", "32"],
        "not_a_checkpoint": ["--checkpoint", str(corpus), "--resume"],
        "bad_schedule": ["--config", str(config)],
        "bad_flag": ["--config", str(config)],
        "bad_init_std": ["--init-std", "-0.1"],
    }[case]
    expected = {
        "missing": "nope.txt: no such file", "not_utf8": "is not UTF-8 text (byte 0xff at offset 5)",
        "empty": "c.txt is empty", "too_short": "too short for block_size 16",
        "unknown_key": "unknown key 'd_modle'", "wrong_type": "steps must be int, not 'many'",
        "resume_without_checkpoint": "--resume needs --checkpoint", "other_vocabulary": "another vocabulary",
        "other_model": "a model with d_model = 16, these settings give 32", "not_a_checkpoint": "not a tinylm checkpoint",
        "bad_schedule": "a cosine decay to min_lr needs decay_steps > warmup_steps=5, got 2",
        "bad_flag": "decay_2d_only must be bool, not 'yes please'",
        "bad_init_std": "init_std must be a positive number, got -0.1",
    }[case]
    corpus.write_bytes({"not_utf8": b"hello\xff", "empty": b"  \n", "too_short": b"a few words only"}.get(case, b"x" * 50))
    config.write_text({"unknown_key": "d_modle: 32\n", "wrong_type": "steps: many\n",
                       "bad_schedule": "warmup_steps: 5\nmin_lr: 0.0001\n",
                       "bad_flag": "decay_2d_only: yes please\n"}.get(case, ""))
    if case in ("other_vocabulary", "other_model"):
        assert train_main([*SMALL, "--steps", "2", "--checkpoint", str(ckpt)]) == 0
        capsys.readouterr()
    assert train_main([*SMALL, "--steps", "2", *args]) == 2
    assert expected in error_line(capsys, "tinylm-train")


def test_nanogpts_recipe_from_a_config_file_reaches_the_optimizer(tmp_path):
    config, ckpt = tmp_path / "recipe.yaml", tmp_path / "run.pt"
    config.write_text("lr: 0.001\nwarmup_steps: 2\nmin_lr: 0.0001\nbeta2: 0.99\nweight_decay: 0.1\n"
                      "decay_2d_only: true\n")
    assert train_main([*SMALL, "--steps", "5", "--config", str(config), "--checkpoint", str(ckpt),
                       "--fast-attention", "false"]) == 0
    saved = torch.load(ckpt, weights_only=True)
    decayed, not_decayed = saved["optimizer"]["param_groups"]
    assert (decayed["weight_decay"], not_decayed["weight_decay"]) == (0.1, 0.0)
    assert tuple(decayed["betas"]) == (0.9, 0.99)
    assert decayed["lr"] == pytest.approx(1e-4 + 0.5 * 9e-4 * (1 + math.cos(math.pi * 2 / 3)), rel=1e-12)  # step 5
    assert saved["settings"]["fast_attention"] is False and saved["settings"]["min_lr"] == 0.0001


def test_the_init_std_is_the_widths_small_init_unless_set(monkeypatch):
    import tinylm_solutions.cli as cli

    made = []
    monkeypatch.setattr(cli, "TinyLM", lambda **kw: made.append(kw["init_std"]) or TinyLM(**kw))
    assert train_main([*SMALL, "--steps", "1"]) == 0
    assert train_main([*SMALL, "--steps", "1", "--init-std", "0.02"]) == 0
    assert made == [pytest.approx(math.sqrt(2 / (5 * 16)), rel=1e-12), 0.02]  # --d-model 16


def test_generate_bad_input(capsys, tmp_path):
    assert generate_main(["--checkpoint", str(tmp_path / "none.pt"), "--prompt", "x"]) == 2
    assert "no such file" in error_line(capsys, "tinylm-generate")
    ckpt = tmp_path / "run.pt"
    assert train_main([*SMALL, "--steps", "2", "--checkpoint", str(ckpt)]) == 0
    capsys.readouterr()
    assert generate_main(["--checkpoint", str(ckpt), "--prompt", "猫"]) == 2
    assert "characters not in the vocabulary" in error_line(capsys, "tinylm-generate")


def test_the_installed_commands_run():
    for command in ("tinylm-train", "tinylm-generate"):
        proc = subprocess.run([str(BIN / command), "--help"], capture_output=True, text=True)
        assert proc.returncode == 0 and "usage:" in proc.stdout


def test_two_processes_take_the_same_steps_as_one_on_the_same_global_batch(tmp_path):
    """torchrun: DistributedDataParallel with gloo on CPU; each rank trains on half of every batch of 8 rows,
    the averaged gradients are the full batch's, so the parameters after 3 steps equal one process's."""
    run = [*SMALL, "--steps", "3", "--batch-size", "8", "--eval-interval", "3", "--sample-tokens", "0"]
    one, two = tmp_path / "one.pt", tmp_path / "two.pt"
    assert train_main([*run, "--checkpoint", str(one)]) == 0
    proc = subprocess.run([str(BIN / "torchrun"), "--standalone", "--nproc_per_node=2", "-m", "tinylm_solutions.cli",
                           *run, "--checkpoint", str(two)], capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("corpus:") == 1 and "2 processes" in proc.stdout  # rank 0 speaks
    a, b = torch.load(one, weights_only=True), torch.load(two, weights_only=True)
    assert a["step"] == b["step"] == 3
    # W_K's bias adds q·b_K to every score of a row: softmax ignores it, so its true gradient is 0 and what
    # AdamW steps on is rounding noise (normalised up to lr-sized steps): it is compared with lr * steps only
    worst = max((a["model"][k] - b["model"][k]).abs().max().item() for k in a["model"] if not k.endswith("W_K.bias"))
    assert worst < 1e-5, worst  # float rounding of the split sums only
    assert all((a["model"][k] - b["model"][k]).abs().max().item() <= 2 * 3 * 0.003 for k in a["model"])
