import math

import torch

from model import TinyLM


def test_overfits_one_batch():
    torch.manual_seed(0)
    model = TinyLM(vocab_size=12, max_seq_len=8, d_model=16, num_heads=2, num_layers=1, d_ff=32)
    batch = torch.randint(12, (4, 8))
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-2)
    for _ in range(100):
        _, loss = model(batch, labels=batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert loss.item() < 0.1 * math.log(12)  # from ln V at the start to near 0
