import torch

from model import TinyLM, causal_mask


def test_mask_is_lower_triangular():
    assert torch.equal(causal_mask(5), torch.ones(5, 5, dtype=torch.bool).tril())


def test_the_model_reads_no_future_token():
    torch.manual_seed(0)
    model = TinyLM(vocab_size=11, max_seq_len=8, d_model=16, num_heads=2, num_layers=2, d_ff=32).eval()
    ids = torch.randint(11, (2, 8))
    changed = ids.clone()
    changed[:, 4:] = (changed[:, 4:] + 1) % 11  # every token after position 3
    with torch.no_grad():
        a, _ = model(ids)
        b, _ = model(changed)
    assert torch.allclose(a[:, :4], b[:, :4], atol=1e-6)  # positions 0..3 unchanged
    assert not torch.allclose(a[:, 4:], b[:, 4:])
