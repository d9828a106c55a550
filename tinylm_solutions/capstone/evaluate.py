"""Measure a checkpoint's loss on a text: python evaluate.py [--checkpoint checkpoint.pt] [--data data/valid.txt]

Prints the mean next-token loss over the text cut into windows of max_seq_len characters (characters that the
checkpoint's vocabulary lacks are left out, and counted).
"""
import argparse

import torch

from model import TinyLM


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default="checkpoint.pt")
    parser.add_argument("--data", default="data/valid.txt")
    args = parser.parse_args()
    ckpt = torch.load(args.checkpoint, weights_only=True)
    model = TinyLM(**ckpt["config"])
    model.load_state_dict(ckpt["model"])
    model.eval()
    stoi = {ch: i for i, ch in enumerate(ckpt["vocab"])}
    with open(args.data, encoding="utf-8") as f:
        text = f.read()
    ids = torch.tensor([stoi[ch] for ch in text if ch in stoi])
    T = ckpt["config"]["max_seq_len"]
    windows = ids[:len(ids) // T * T].view(-1, T)  # (N, T): the text, cut into windows
    with torch.no_grad():  # each batch's mean, weighted by its windows: the mean over all of them
        total = sum(float(model(batch, labels=batch)[1]) * len(batch) for batch in windows.split(64))
    print(f"loss {total / len(windows):.3f} on {len(windows)} windows of {T} characters "
          f"({len(text) - len(ids)} characters outside the vocabulary left out)")


if __name__ == "__main__":
    main()
