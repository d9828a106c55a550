"""tinylm-train and tinylm-generate as a user runs them: settings from the package's YAML, a --config file and
the command line; a corpus given by name (en, zh) or path; checkpoints and an exact --resume; one clear line for bad
input, in the user's language (TINYLM_LANG=en or zh), whatever the input."""
from __future__ import annotations

import contextlib
import math
import os
import re
import signal
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
    for command in ("tinylm-train", "tinylm-generate", "tinylm-class-report", "tinylm-check-service"):
        proc = subprocess.run([str(BIN / command), "--help"], capture_output=True, text=True)
        assert proc.returncode == 0 and "usage:" in proc.stdout


def _descendants(pid: int) -> list[int]:
    """Every live process under ``pid`` (Linux: read from /proc), children first."""
    parent = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            parent[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        kids = [p for p, pp in parent.items() if pp in frontier]
        found += kids
        frontier = kids
    return found[::-1]


def test_two_processes_take_the_same_steps_as_one_on_the_same_global_batch(tmp_path, capsys):
    """torchrun: DistributedDataParallel with gloo on CPU; each rank trains on half of every batch of 8 rows,
    the averaged gradients are the full batch's, so the parameters after 3 steps equal one process's."""
    run = [*SMALL, "--steps", "3", "--batch-size", "8", "--eval-interval", "3", "--sample-tokens", "0"]
    one, two = tmp_path / "one.pt", tmp_path / "two.pt"
    assert train_main([*run, "--checkpoint", str(one)]) == 0
    proc = subprocess.Popen([str(BIN / "torchrun"), "--standalone", "--nproc_per_node=2", "-m", "tinylm_solutions.cli",
                             *run, "--checkpoint", str(two)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True,
                            env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONFAULTHANDLER": "1"})
    try:
        out, err = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:  # every process's Python stack (faulthandler on SIGABRT), then none is left
        family = _descendants(proc.pid)  # torchrun starts its workers in sessions of their own
        for pid in [*family, proc.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGABRT)
        try:
            out, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired as e:
            out, err = e.stdout or "", e.stderr or ""
        finally:
            for pid in [*family, proc.pid]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            proc.wait()
        out, err = (x.decode(errors="replace") if isinstance(x, bytes) else x for x in (out, err))
        pytest.fail(f"torchrun still running after 300 s; stdout:\n{out}\nstderr (stacks):\n{err[-6000:]}")
    assert proc.returncode == 0, err[-2000:]
    assert out.count("corpus:") == 1 and "2 processes" in out  # rank 0 speaks
    last = capsys.readouterr().out.strip().splitlines()[-1]  # one process's "step 3: train loss ..." line
    assert last.startswith("step 3:") and out.strip().splitlines()[-1] == last  # the loss of the whole batch
    a, b = torch.load(one, weights_only=True), torch.load(two, weights_only=True)
    assert a["step"] == b["step"] == 3
    # W_K's bias adds q·b_K to every score of a row: softmax ignores it, so its true gradient is 0 and what
    # AdamW steps on is rounding noise (normalised up to lr-sized steps): it is compared with lr * steps only
    worst = max((a["model"][k] - b["model"][k]).abs().max().item() for k in a["model"] if not k.endswith("W_K.bias"))
    assert worst < 1e-5, worst  # float rounding of the split sums only
    assert all((a["model"][k] - b["model"][k]).abs().max().item() <= 2 * 3 * 0.003 for k in a["model"])


# ---- bad input from the installed commands, in both languages: one line, exit status 2, no traceback

CJK = re.compile(r"[\u4e00-\u9fff]")
TINY = ["--d-model", "16", "--num-heads", "2", "--num-layers", "1", "--block-size", "16", "--batch-size", "4",
        "--max-chars", "6000", "--sample-tokens", "0", "--no-progress"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The files the bad inputs point at: corpora, configs and checkpoints (a real one, trained for 2 steps)."""
    folder = tmp_path_factory.mktemp("bad")
    for name, data in {"tiny.txt": b"abc", "latin1.txt": "caf\xe9 au lait".encode("latin-1"), "blank.txt": b" \n\t\n",
                       "words.txt": b"few words, and fewer still. " * 8, "nope.yaml": b"steps: [\n",
                       "list.yaml": b"- 1\n- 2\n", "typo.yaml": b"d_modle: 32\n", "many.yaml": b"steps: many\n",
                       "null.yaml": b"steps: null\n", "flag.yaml": b"decay_2d_only: yes please\n",
                       "schedule.yaml": b"warmup_steps: 5\nmin_lr: 0.0001\nsteps: 2\n"}.items():
        (folder / name).write_bytes(data)
    (folder / "folder").mkdir()
    ckpt = folder / "run.pt"
    assert train_main([*TINY, "--steps", "2", "--checkpoint", str(ckpt)]) == 0
    saved = torch.load(ckpt, weights_only=True)
    torch.save({"model": 1}, folder / "lacks.pt")
    torch.save({**saved, "model": {"nonsense": torch.zeros(1)}}, folder / "damaged.pt")
    return folder


def run(command: str, args: list[str], lang: str, **env) -> subprocess.CompletedProcess:
    environ = {**os.environ, "TINYLM_LANG": lang, "OMP_NUM_THREADS": "1", **env}
    environ.pop("WORLD_SIZE", None) if "WORLD_SIZE" not in env else None
    return subprocess.run([str(BIN / command), *args], capture_output=True, text=True, timeout=300, env=environ)


def assert_one_line(proc: subprocess.CompletedProcess, prog: str, lang: str, *fragments: str) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = proc.stderr.strip().splitlines()
    start = f"{prog}: error: " if lang == "en" else f"{prog}：错误："  # argparse's own word too (i18n.error_line)
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith(start), proc.stderr[-3000:]
    line = rest = lines[0]
    for fragment in fragments:  # what the line must say in either language: numbers, options, names
        assert fragment in line, (fragment, line)
        rest = rest.replace(fragment, "")
    assert bool(CJK.search(rest)) == (lang == "zh"), line  # in the user's language (the paths are ASCII)
    return line


TRAIN_CASES = {  # name: (arguments, {file name: path in files}, fragments either language says, extra environment)
    "corpus_missing": (["--corpus", "{f}/none.txt"], ("none.txt", "--corpus zh")),
    "corpus_is_a_folder": (["--corpus", "{f}/folder"], ("folder",)),
    "corpus_not_utf8": (["--corpus", "{f}/latin1.txt"], ("UTF-8", "0xe9", "3")),
    "corpus_empty": (["--corpus", "{f}/blank.txt"], ("blank.txt",)),
    "corpus_3_chars": (["--corpus", "{f}/tiny.txt"], ("3", "650", "block_size 64", "--block-size")),
    "corpus_too_few_words": (["--corpus", "{f}/words.txt", "--tokenizer", "word", "--block-size", "16"],
                             ("56", "170", "block_size 16")),
    "max_chars_cuts_too_much": (["--max-chars", "100"], ("100", "650", "--max-chars 100")),
    "config_missing": (["--config", "{f}/none.yaml"], ("none.yaml",)),
    "config_not_yaml": (["--config", "{f}/nope.yaml"], ("nope.yaml", "2")),
    "config_not_a_mapping": (["--config", "{f}/list.yaml"], ("list.yaml",)),
    "config_unknown_key": (["--config", "{f}/typo.yaml"], ("'d_modle'", "d_model")),
    "config_wrong_type": (["--config", "{f}/many.yaml"], ("steps", "int", "'many'")),
    "config_null": (["--config", "{f}/null.yaml"], ("steps", "null")),
    "config_bad_flag": (["--config", "{f}/flag.yaml"], ("decay_2d_only", "bool", "'yes please'")),
    "bad_schedule": (["--config", "{f}/schedule.yaml"], ("decay_steps", "warmup_steps=5", "2")),
    "unknown_tokenizer": (["--tokenizer", "bpe"], ("char", "word", "'bpe'")),
    "zero_steps": (["--steps", "0"], ("steps", ">= 1", "0")),
    "heads_do_not_divide": (["--d-model", "30", "--num-heads", "4"], ("d_model 30", "num_heads 4")),
    "negative_init_std": (["--init-std", "-0.1"], ("init_std", "-0.1")),
    "negative_weight_decay": (["--weight-decay", "-1"], ("weight_decay", ">= 0", "-1.0")),
    "dropout_one": (["--dropout", "1"], ("dropout", "[0, 1)", "1.0")),
    "negative_seed": (["--seed", "-1"], ("seed", "-1")),
    "not_an_integer": (["--steps", "many"], ("--steps", "'many'")),
    "not_a_flag": (["--fused-adamw", "maybe"], ("--fused-adamw", "'maybe'")),
    "unknown_option": (["--d-modle", "32"], ("--d-modle",)),
    "resume_without_checkpoint": (["--resume"], ("--resume", "--checkpoint")),
    "checkpoint_folder_missing": (["--checkpoint", "{f}/none/run.pt"], ("none",)),
    "checkpoint_is_a_folder": (["--checkpoint", "{f}/folder"], ("folder", "run.pt")),
    "resume_from_a_text_file": (["--checkpoint", "{f}/tiny.txt", "--resume"], ("tiny.txt", "tinylm")),
    "resume_from_a_dict": (["--checkpoint", "{f}/lacks.pt", "--resume"], ("lacks.pt", "model_config")),
    "resume_damaged": ([*TINY, "--checkpoint", "{f}/damaged.pt", "--resume"], ("damaged.pt", "model")),
    "other_vocabulary": ([*TINY, "--max-chars", "3000", "--checkpoint", "{f}/run.pt", "--resume"],
                         ("run.pt", "--tokenizer")),
    "other_model": ([*TINY, "--d-model", "32", "--checkpoint", "{f}/run.pt", "--resume"],
                    ("d_model = 16", "32")),
    "resume_past_its_steps": ([*TINY, "--steps", "1", "--checkpoint", "{f}/run.pt", "--resume"],
                              ("run.pt", "2", "--steps")),
    "diverges": ([*TINY, "--steps", "20", "--lr", "1e6", "--max-grad-norm", "1e9"], ("nan", "--lr")),
    "batch_not_divisible_by_processes": ([*TINY, "--batch-size", "4"], ("batch_size 4", "3"), {"WORLD_SIZE": "3"}),
}
GENERATE_CASES = {
    "arguments_missing": ([], ("--checkpoint", "--prompt")),
    "checkpoint_missing": (["--checkpoint", "{f}/none.pt", "--prompt", "x"], ("none.pt",)),
    "not_a_checkpoint": (["--checkpoint", "{f}/tiny.txt", "--prompt", "x"], ("tiny.txt", "tinylm")),
    "checkpoint_lacks_keys": (["--checkpoint", "{f}/lacks.pt", "--prompt", "x"], ("lacks.pt", "vocab")),
    "checkpoint_damaged": (["--checkpoint", "{f}/damaged.pt", "--prompt", "The"], ("damaged.pt", "model")),
    "prompt_unknown_characters": (["--checkpoint", "{f}/run.pt", "--prompt", "猫 and 狗"], ("'狗', '猫'", "61")),
    "prompt_empty": (["--checkpoint", "{f}/run.pt", "--prompt", ""], ()),
    "temperature_zero": (["--checkpoint", "{f}/run.pt", "--prompt", "The", "--temperature", "0"],
                         ("--temperature", "0.0")),
    "negative_tokens": (["--checkpoint", "{f}/run.pt", "--prompt", "The", "--tokens", "-1"], ("--tokens", "-1")),
    "top_k_zero": (["--checkpoint", "{f}/run.pt", "--prompt", "The", "--top-k", "0"], ("--top-k", ">= 1")),
    "tokens_not_an_integer": (["--checkpoint", "{f}/run.pt", "--prompt", "The", "--tokens", "ten"],
                              ("--tokens", "'ten'")),
}


def _case(cases: dict, name: str, folder: Path):
    args, fragments, *env = cases[name]
    return [a.replace("{f}", str(folder)) for a in args], fragments, (env[0] if env else {})


def call(main, args: list[str], lang: str, monkeypatch, capsys, **env) -> subprocess.CompletedProcess:
    """``main(args)`` in this process, as the command runs it (an exception would fail the test, where the command
    would print a traceback; argparse's errors end in SystemExit): its exit status and standard error. The commands
    themselves run as processes in the tests above and below; here every bad input, in both languages, would be a
    hundred processes that each import torch."""
    monkeypatch.setenv("TINYLM_LANG", lang)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    capsys.readouterr()
    try:
        status = main(args)
    except SystemExit as e:
        status = e.code
    return subprocess.CompletedProcess(args, status, "", capsys.readouterr().err)


def _cases():
    commands = (("tinylm-train", train_main, TRAIN_CASES), ("tinylm-generate", generate_main, GENERATE_CASES))
    for prog, main, cases in commands:
        for name in cases:
            yield pytest.param(prog, main, cases, name, id=f"{prog}-{name}")


class BadInput:
    lang = "en"

    @pytest.mark.parametrize("prog, main, cases, case", list(_cases()))
    def test_one_line_in_the_users_language(self, files, prog, main, cases, case, monkeypatch, capsys):
        args, fragments, env = _case(cases, case, files)
        assert_one_line(call(main, args, self.lang, monkeypatch, capsys, **env), prog, self.lang, *fragments)


class TestBadInputEnglish(BadInput):  # a class per language: xdist's loadscope spreads them
    lang = "en"


class TestBadInputChinese(BadInput):
    lang = "zh"


def test_the_3_character_corpus_of_the_issue_says_how_much_it_needs(files):
    """The report that started it: a traceback (ValueError: 3 tokens are too few for val_fraction=0.1)."""
    en = assert_one_line(run("tinylm-train", ["--corpus", str(files / "tiny.txt")], "en"), "tinylm-train", "en")
    zh = assert_one_line(run("tinylm-train", ["--corpus", str(files / "tiny.txt")], "zh"), "tinylm-train", "zh")
    assert "the corpus has 3 characters: too short for block_size 64. It needs at least 650 characters" in en
    assert "语料只有 3 个字符" in zh and "至少需要 650 个字符" in zh


@pytest.mark.parametrize("block_size", [1, 2, 7, 16, 64, 100, 255])
def test_min_tokens_is_the_shortest_corpus_that_trains(block_size):
    from tinylm_solutions.cli import VAL_FRACTION, min_tokens
    from tinylm_solutions.data import train_val_split

    n = min_tokens(block_size)
    train_part, val_part = train_val_split(torch.arange(n), VAL_FRACTION)
    assert len(train_part) > block_size and len(val_part) > block_size
    short = int((n - 1) * VAL_FRACTION)
    assert short <= block_size or n - 1 - short <= block_size  # one token fewer is not enough


# ---- every sentence in both languages

def test_every_message_of_the_command_lines_has_its_chinese():
    from tinylm_solutions import i18n
    from tinylm_solutions.messages import FOLDER, TEXT

    i18n.catalog.cache_clear()
    untranslated = [key for key, english in TEXT.items() if i18n.translate(FOLDER, key, english, "zh") == english]
    assert untranslated == []


def test_every_setting_has_its_own_help_text():
    import yaml

    from tinylm_solutions.cli import DEFAULTS
    from tinylm_solutions.messages import TEXT

    assert [k for k in yaml.safe_load(DEFAULTS.read_text()) if f"train.help.{k}" not in TEXT] == []


@pytest.mark.parametrize("command", ["tinylm-train", "tinylm-generate", "tinylm-class-report", "tinylm-check-service"])
def test_the_help_is_in_the_users_language(command):
    en, zh = (subprocess.run([str(BIN / command), "--help"], capture_output=True, text=True,
                             env={**os.environ, "TINYLM_LANG": lang}) for lang in ("en", "zh"))
    assert en.returncode == zh.returncode == 0
    assert not CJK.search(en.stdout) and "usage:" in en.stdout
    assert "用法：" in zh.stdout and "usage:" not in zh.stdout and {"tinylm-train": "训练", "tinylm-generate": "续写",
                                      "tinylm-class-report": "全班", "tinylm-check-service": "参考答案"}[command] in zh.stdout


def test_a_run_speaks_chinese(capsys, monkeypatch):
    monkeypatch.setenv("TINYLM_LANG", "zh")
    assert train_main([*SMALL, "--steps", "4", "--eval-interval", "2"]) == 0
    out = capsys.readouterr().out
    assert "语料：6,000 个字符 -> 6,000 个 token" in out and "第 2 步：训练损失" in out and "第 4 步" in out
    assert "验证集困惑度" in out and "生成样例：" in out


# ---- the embedded corpora

def test_the_chinese_corpus_trains_and_generates_chinese(capsys, tmp_path):
    ckpt = tmp_path / "zh.pt"
    assert train_main([*SMALL, "--corpus", "zh", "--steps", "3", "--checkpoint", str(ckpt)]) == 0
    out = capsys.readouterr().out
    assert "corpus: 6,000 chars -> 6,000 tokens" in out and CJK.search(out.split("sample:")[1])
    assert generate_main(["--checkpoint", str(ckpt), "--prompt", "春风", "--tokens", "20"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("春风") and len(CJK.findall(text)) >= 5


def test_corpus_en_is_the_default(capsys):
    assert train_main([*SMALL, "--steps", "1", "--corpus", "en"]) == 0
    named = capsys.readouterr().out.splitlines()[0]
    assert train_main([*SMALL, "--steps", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == named


def test_the_word_tokenizer_cuts_the_chinese_corpus_into_words(capsys, tmp_path):
    ckpt = tmp_path / "words.pt"
    assert train_main([*SMALL, "--corpus", "zh", "--tokenizer", "word", "--steps", "2", "--max-chars", "20000",
                       "--checkpoint", str(ckpt)]) == 0
    tokens = int(re.search(r"-> ([\d,]+) tokens", capsys.readouterr().out).group(1).replace(",", ""))
    assert 9_000 < tokens < 14_000  # about 1.6 characters a token: jieba's words and the punctuation, no newlines
    assert generate_main(["--checkpoint", str(ckpt), "--prompt", "春风明月", "--tokens", "5"]) == 0
    assert capsys.readouterr().out.startswith("春风明月")  # no spaces between Chinese words
