"""tinylm_solutions.data: the stdlib-docstring corpus, splits and nanoGPT-style batches."""
import pytest
import torch

from tinylm_solutions.data import default_corpus, get_batch, lm_batches, train_val_split


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
