"""Continue a prompt: python generate.py --checkpoint checkpoint.pt --prompt "def " [--max-new-tokens 200]
[--temperature 1.0] [--top-k K] [--seed 0]. Prints the prompt and its continuation."""
import argparse

import torch

from model import TinyLM


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    model.eval()
    for _ in range(max_new_tokens):
        logits, _ = model(idx[:, -model.max_seq_len:])  # crop to the context the model knows
        logits = logits[:, -1] / temperature  # (B, V): the last position's
        if top_k is not None:
            kth = torch.topk(logits, min(top_k, logits.size(-1))).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        nxt = torch.multinomial(logits.softmax(dim=-1), 1, generator=generator)  # (B, 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default="checkpoint.pt")
    parser.add_argument("--prompt", default="def ")
    parser.add_argument("--max-new-tokens", type=int, default=200)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--top-k", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    ckpt = torch.load(args.checkpoint, weights_only=True)
    model = TinyLM(**ckpt["config"])
    model.load_state_dict(ckpt["model"])
    stoi = {ch: i for i, ch in enumerate(ckpt["vocab"])}
    idx = torch.tensor([[stoi[ch] for ch in args.prompt]])  # (1, T)
    out = generate(model, idx, args.max_new_tokens, args.temperature, args.top_k,
                   torch.Generator().manual_seed(args.seed))
    print("".join(ckpt["vocab"][i] for i in out[0].tolist()))


if __name__ == "__main__":
    main()
