"""tinylm_solutions.data: the stdlib-docstring corpus, the Chinese corpus, splits and nanoGPT-style batches."""
import importlib.util
import re
from pathlib import Path

import pytest
import torch

from tinylm_solutions.data import (CORPORA, ZH_CORPUS, chinese_corpus, corpus, default_corpus, get_batch, lm_batches,
                                   train_val_split)

ROOT = Path(__file__).resolve().parent.parent


def test_default_corpus_deterministic_and_sized():
    text = default_corpus()
    assert text == default_corpus()
    assert 50_000 < len(text) < 500_000
    assert "Return" in text
    assert default_corpus(max_chars=100) == text[:100]


def test_train_val_split():
    data = torch.arange(100)
    train, val = train_val_split(data, 0.1)
    assert torch.equal(train, torch.arange(90)) and torch.equal(val, torch.arange(90, 100))
    with pytest.raises(ValueError):
        train_val_split(data, 0.0)
    with pytest.raises(ValueError):
        train_val_split(torch.arange(5), 0.1)


def test_get_batch_shapes_shift_and_seed():
    data = torch.arange(1000)
    x, y = get_batch(data, 4, 8, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 8) and x.dtype == y.dtype == torch.long
    assert torch.equal(y, x + 1)  # data[i] == i, so the targets are the next tokens
    assert torch.equal(x[:, 1:], x[:, :-1] + 1)  # contiguous windows
    x2, _ = get_batch(data, 4, 8, torch.Generator().manual_seed(0))
    assert torch.equal(x, x2)


def test_get_batch_covers_last_window_only_in_range():
    data = torch.arange(10)
    x, y = get_batch(data, 200, 9, torch.Generator().manual_seed(0))
    assert torch.equal(x[:, 0].unique(), torch.tensor([0]))  # only start 0 fits (needs 9 + 1 tokens)
    assert torch.equal(y[0], torch.arange(1, 10))
    with pytest.raises(ValueError):
        get_batch(data, 1, 10)


def test_lm_batches_non_overlapping():
    data = torch.arange(23)
    batches = list(lm_batches(data, 2, 5))  # (23 - 1) // 5 = 4 windows
    assert [b[0].shape for b in batches] == [(2, 5), (2, 5)]
    xs = torch.cat([b[0] for b in batches])
    ys = torch.cat([b[1] for b in batches])
    assert torch.equal(xs.flatten(), torch.arange(20)) and torch.equal(ys.flatten(), torch.arange(1, 21))
    assert [b[0].shape[0] for b in lm_batches(torch.arange(16), 2, 5)] == [2, 1]
    with pytest.raises(ValueError):
        list(lm_batches(torch.arange(5), 2, 5))


# ---- the Chinese corpus, and corpora by name

def _tool():
    spec = importlib.util.spec_from_file_location("make_zh_corpus", ROOT / "tools" / "make_zh_corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # imports only the standard library (OpenCC when it builds)
    return module


def test_chinese_corpus_is_whole_tang_poems_in_simplified_characters():
    text = chinese_corpus()
    assert text == chinese_corpus() and chinese_corpus(max_chars=100) == text[:100]
    assert ZH_CORPUS.stat().st_size <= 2 * 2 ** 20  # assets/ keeps files under 2 MiB: 1,834,606 bytes
    assert len(text) == 650_852 and len(set(text)) == 5_155 and text.endswith("\n") and "\r" not in text
    poems = text.rstrip("\n").split("\n\n")
    assert len(poems) == 10_622
    han = "[\u3400-\u4dbf\u4e00-\u9fff]"  # OpenCC writes a few simplified characters of extension A (骝 -> 䯄)
    for poem in poems:  # a title line, then 2 or 4 couplets of 5- or 7-character lines
        title, *couplets = poem.split("\n")
        assert re.fullmatch(r"[^《》\s]+《[^《》]+》", title), title
        assert len(couplets) in (2, 4), poem
        lengths = {len(line) for c in couplets for line in re.fullmatch(f"({han}+)，({han}+)[。？！]", c).groups()}
        assert lengths in ({5}, {7}), poem
    assert "春风不度玉门关。" in text and "李白《" in text and "杜甫《" in text
    assert not set("風國學為說們長時東門開") & set(text)  # traditional characters were converted


def test_the_tools_selection_rule():
    regulated = _tool().regulated
    assert regulated(["床前看月光，疑是地上霜。", "举头望山月，低头思故乡。"])  # 五言绝句
    assert regulated(["春风又绿江南岸，明月何时照我还？"] * 4)  # 七言律诗's shape
    assert not regulated(["床前看月光，疑是地上霜。"] * 3)  # 3 couplets
    assert not regulated(["床前看月光，疑是地上霜。", "春风又绿江南岸，明月何时照我还？"])  # 5 and 7 mixed
    assert not regulated(["床前看□光，疑是地上霜。", "举头望山月，低头思故乡。"])  # a missing character
    assert not regulated(["床前看月光，疑是地上霜（一作雪）。", "举头望山月，低头思故乡。"])  # a note


def test_corpus_by_name_or_path(tmp_path):
    assert CORPORA == ("en", "zh")
    assert corpus() == corpus("en") == default_corpus() and corpus("en", max_chars=50) == default_corpus()[:50]
    assert corpus("zh") == chinese_corpus() and corpus("zh", 10) == chinese_corpus()[:10]
    poem = tmp_path / "zh"  # a file named like a corpus is still reachable by a path
    poem.write_bytes("白日依山尽，\r\n黄河入海流。".encode("utf-8"))
    assert corpus(str(poem)) == corpus(poem) == "白日依山尽，\r\n黄河入海流。"  # the file's text as it is
    assert corpus(poem, max_chars=5) == "白日依山尽"
    with pytest.raises(FileNotFoundError):
        corpus(tmp_path / "none.txt")
    (tmp_path / "latin1.txt").write_bytes("café".encode("latin-1"))
    with pytest.raises(UnicodeDecodeError):
        corpus(tmp_path / "latin1.txt")


def test_a_missing_chinese_corpus_is_a_file_not_found(monkeypatch, tmp_path):
    import tinylm_solutions.data as data

    monkeypatch.setattr(data, "ZH_CORPUS", tmp_path / "none.txt")
    with pytest.raises(FileNotFoundError):
        corpus("zh")
