"""Train the model: python train.py [--config configs/tiny.yaml] [--steps N] [--out checkpoint.pt] [--data FILE]

Trains on a text file (data/train.txt unless --data names another), prints the loss every few steps and saves
{"config", "model", "vocab"} to the checkpoint.
"""
import argparse
import math

import torch
import yaml

from model import TinyLM


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/tiny.yaml")
    parser.add_argument("--steps", type=int, default=None, help="overrides train.steps of the config")
    parser.add_argument("--out", default="checkpoint.pt")
    parser.add_argument("--data", default="data/train.txt", help="the text file to train on")
    args = parser.parse_args()
    with open(args.config, encoding="utf-8") as f:  # by name: Windows' default is the system's code page
        config = yaml.safe_load(f)
    train = config["train"]
    steps = args.steps if args.steps is not None else train["steps"]
    torch.manual_seed(train["seed"])

    with open(args.data, encoding="utf-8") as f:
        text = f.read()
    vocab = sorted(set(text))  # a character-level tokenizer
    stoi = {ch: i for i, ch in enumerate(vocab)}
    data = torch.tensor([stoi[ch] for ch in text])
    model_config = {**config["model"], "vocab_size": len(vocab)}
    model = TinyLM(**model_config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=train["lr"])
    T, B = model_config["max_seq_len"], train["batch_size"]
    print(f"{sum(p.numel() for p in model.parameters()):,d} parameters; ln V = {math.log(len(vocab)):.3f}")
    model.train()
    for step in range(1, steps + 1):
        starts = torch.randint(len(data) - T - 1, (B,))
        x = torch.stack([data[s:s + T] for s in starts])  # (B, T)
        _, loss = model(x, labels=x)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step == 1 or step % 50 == 0 or step == steps:
            print(f"step {step}: loss {loss.item():.3f}")
    torch.save({"config": model_config, "model": model.state_dict(), "vocab": vocab}, args.out)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
