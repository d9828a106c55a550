"""Stage 08 checks: the causal language-model loss, TinyLM, and its parameter table.

``check_causal_lm_loss`` compares ``causal_lm_loss(logits, labels)`` with ``F.cross_entropy`` on the
shifted raw logits (``logits[:, :-1]`` against ``labels[:, 1:]``, ``ignore_index=-100``), first with
labels that are all real token ids, then with some marked -100.

``check_tiny_lm`` builds the learner's ``TinyLM(vocab_size, max_seq_len, d_model, num_heads, num_layers,
d_ff)``, checks its layout (``token_emb, pos_emb, blocks, norm, lm_head``, ``lm_head.weight`` *is*
``token_emb.weight``), copies the reference's (random) weights in by name and compares logits and loss; it
tests causality by perturbation, the ``ValueError`` for inputs longer than ``max_seq_len``, that the tie
survives an optimizer step (the same step on the reference gives the same logits), and, on a fresh build of
its own, GPT-2's initialisation and a loss at init close to ``ln V``.

``check_parameter_table`` gives reference models (tied, untied, without positions, with frozen sinusoidal
positions) to ``parameter_table(model)`` and compares the dicts.
"""
from __future__ import annotations

import functools
import math
import re

import torch
import torch.nn.functional as F
from torch import nn

from ._core import CheckFailure, Ctx, check, close, compare, fmt_shape, reference, within
from ._modules import count_params
from ._text import MISTAKE, say
from .block import _changes, _snapshot

ref = reference("model")
ref_attention = reference("attention")

__all__ = ["check_causal_lm_loss", "check_tiny_lm", "check_parameter_table"]

IGNORE = -100

# ---- the loss (exercise 1, and the loss TinyLM returns)


# ---- TinyLM (exercise 2)


# ---- parameter_table (exercise 3)
TABLE_KEYS = ("token_emb", "pos_emb", "blocks", "norm", "lm_head", "total")


def _one_thread(fn):
    """Run a check body on one intra-op thread (restored afterwards): its tensors are tiny, and on a busy
    2-core machine a second OpenMP thread makes each of its hundreds of small operations wait (10-20x slower)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return fn(*args, **kwargs)
        finally:
            torch.set_num_threads(threads)
    return wrapper


def _ce(logits, targets, **kw):
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), **kw)


def _loss_variants(logits: torch.Tensor, labels: torch.Tensor):
    """Known wrong losses, as (mistake, loss) pairs."""
    clean = labels.masked_fill(labels == IGNORE, 0)  # -100 turned into token id 0
    per = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1),
                          ignore_index=IGNORE, reduction="none")  # (B (T-1),), 0 where ignored
    out = [(MISTAKE.labels_not_shifted, _ce(logits, labels, ignore_index=IGNORE)),
           (MISTAKE.labels_shifted_twice, _ce(logits[:, :-2], labels[:, 2:], ignore_index=IGNORE)),
           (MISTAKE.shift_reversed, _ce(logits[:, 1:], labels[:, :-1], ignore_index=IGNORE)),
           (MISTAKE.softmax_before_loss, _ce(logits[:, :-1].softmax(-1), labels[:, 1:], ignore_index=IGNORE)),
           (MISTAKE.softmax_before_loss, F.nll_loss(logits[:, :-1].softmax(-1).reshape(-1, logits.size(-1)),
                                            labels[:, 1:].reshape(-1), ignore_index=IGNORE)),
           (MISTAKE.loss_summed, _ce(logits[:, :-1], labels[:, 1:], ignore_index=IGNORE, reduction="sum"))]
    if bool((labels == IGNORE).any()):
        out += [(MISTAKE.ignored_targets_scored, _ce(logits[:, :-1], clean[:, 1:])), (MISTAKE.ignored_targets_scored, per.mean())]
        counted = (labels[:, 1:] != IGNORE).sum(1).clamp(min=1)  # (B,): targets per sequence
        per_sequence = per.view(labels.size(0), -1).sum(1) / counted  # (B,): each sequence's own mean
        out.append((MISTAKE.loss_per_sequence, per_sequence.mean()))  # equal to the right one when no target is ignored
    if bool((labels[:, 1:] == 0).any()):
        out.append((MISTAKE.ignore_index_zero, _ce(logits[:, :-1], clean[:, 1:], ignore_index=0)))
    return out


def _labels(ctx: Ctx, B: int, T: int, V: int, ignored: bool) -> torch.Tensor:
    """Random token ids (B, T) with a few 0s among the targets; with ``ignored``, some targets are -100."""
    labels = torch.randint(1, V, (B, T), generator=ctx.gen)
    labels[0, 2], labels[B - 1, T - 2] = 0, 0  # token id 0 is a real token
    if ignored:
        labels[0, T - 2:] = IGNORE  # right padding of sequence 0
        labels[B - 1, 3] = IGNORE
    return labels


def _check_loss_value(ctx: Ctx, got, logits, labels, tried: str) -> None:
    """The loss ``got`` must be a 0-dim tensor equal to the reference's; a wrong value names the known wrong loss
    it equals."""
    what = say("model.loss.what")
    expected = ref.causal_lm_loss(logits, labels)
    if isinstance(got, (int, float)) and not isinstance(got, bool):  # loss.item(), or a sum of .item()s
        ctx.fail("model.loss.not_a_tensor", what=what, tried=tried, got=f"{got!r} ({type(got).__name__})",
                 mistake=MISTAKE.loss_returned_as_float)
    ctx.tensor(got, what, (), dtype=logits.dtype, tried=tried, hint=say("model.loss.shape_hint"))
    if within(got, expected):
        return
    mistake = next((n for n, v in _loss_variants(logits, labels) if close(got, v)), None)
    ctx.fail("model.loss.not_reference", what=what, value=expected.item(), tried=tried, got=f"{got.item():.6f}",
             mistake=mistake)


def _loss_sizes(seed: int) -> tuple[int, int, int]:
    return (3, 7, 11) if seed == 0 else (2 + seed % 3, 6 + seed % 2, 13)


@check
@_one_thread
def check_causal_lm_loss(ctx: Ctx, causal_lm_loss) -> str:
    """Check ``causal_lm_loss(logits (B, T, V), labels (B, T)) -> ()``: the mean cross-entropy of
    ``logits[:, :-1]`` against ``labels[:, 1:]`` with ``ignore_index=-100``; labels that are all token ids
    first (0 among them), then some -100 (which must not move the loss); float64 in, float64 out, float32
    in, float32 out; differentiable with respect to the logits."""
    fn = ctx.function(causal_lm_loss, "causal_lm_loss")
    B, T, V = _loss_sizes(ctx.seed)
    logits = ctx.randn(B, T, V) * 2.0  # (B, T, V)
    clean = _labels(ctx, B, T, V, ignored=False)
    tried = say("causal_lm_loss.tried_token_ids", logits=fmt_shape(logits.shape), labels=fmt_shape(clean.shape),
                seed=ctx.seed)
    got = ctx.call(fn, logits, clean, what=say("core.called_with", tried=tried), names=("logits", "labels"))
    _check_loss_value(ctx, got, logits, clean, tried)

    padded = _labels(ctx, B, T, V, ignored=True)
    n_ignored = int((padded[:, 1:] == IGNORE).sum())
    tried = say("causal_lm_loss.tried_ignored", logits=fmt_shape(logits.shape), labels=fmt_shape(padded.shape),
                n_ignored=n_ignored, last=B - 1, seed=ctx.seed)
    what = say("core.called_with", tried=tried)
    got = ctx.call(fn, logits, padded, what=what, names=("logits", "labels"), mistake_if_raises=MISTAKE.ignored_targets_scored)
    _check_loss_value(ctx, got, logits, padded, tried)
    # the ignored targets' logits must not move the loss
    moved = logits.clone()
    moved[0, T - 3:] = ctx.randn(3, V) * 5.0  # (3, V): predictions for sequence 0's ignored targets, and the last
    again = ctx.call(fn, moved, padded, what=say("causal_lm_loss.called_again"), names=("logits", "labels"))
    if not close(again, got):
        ctx.fail("causal_lm_loss.ignored_moved", tried=tried, before=got.item(), after=again.item(),
                 mistake=MISTAKE.ignored_targets_scored)
    ctx.differentiable(fn, logits, padded, what=what, names=("logits",))
    ctx.dtype_follows(fn, logits, padded, what=what, names=("logits", "labels"))
    return say("causal_lm_loss.passed")


# --------------------------------------------------------------------------- TinyLM

def _lm_sizes(seed: int) -> tuple[int, int, int, int, int, int, int, int]:
    """(V, L, D, H, N, d_ff, B, T) with T < L and d_ff != 4 D."""
    if seed == 0:
        return 29, 9, 12, 3, 2, 20, 2, 7
    return (31, 10, 16, 2, 2, 24, 3, 8) if seed % 2 else (23, 11, 14, 2, 3, 18, 2, 9)


def _describe(V, L, D, H, N, d_ff) -> str:
    return (f"TinyLM(vocab_size={V}, max_seq_len={L}, d_model={D}, num_heads={H}, num_layers={N}, d_ff={d_ff})")


def _build(ctx: Ctx, cls, V, L, D, H, N, d_ff) -> nn.Module:
    return ctx.build(cls, V, L, D, H, N, d_ff, what=say("tiny_lm.created", model=_describe(V, L, D, H, N, d_ff)))


def _layout(ctx: Ctx, model: nn.Module, V, L, D, H, N, d_ff) -> None:
    """token_emb, pos_emb, blocks, norm, lm_head with the right sizes; lm_head.weight *is* token_emb.weight."""
    cls = type(model).__name__
    for name, expected in (("token_emb", f"nn.Embedding({V}, {D})"), ("pos_emb", f"nn.Embedding({L}, {D})")):
        emb = ctx.attribute(model, name, expected)
        w = getattr(emb, "weight", None)
        if not isinstance(emb, nn.Embedding) or w is None or tuple(w.shape) != ((V if name == "token_emb" else L), D):
            kind = type(emb).__name__
            ctx.fail("tiny_lm.layout.embedding", cls=cls, name=name, layer=expected,
                     rows="vocab_size" if name == "token_emb" else "max_seq_len",
                     got=say("tiny_lm.layout.with_weight", kind=kind, shape=fmt_shape(w.shape))
                     if isinstance(w, torch.Tensor) else kind)
    if getattr(model, "norm", None) is None:
        ctx.fail("tiny_lm.layout.no_norm", cls=cls, mistake=MISTAKE.no_final_norm)
    norm_w = getattr(model.norm, "weight", None)
    if not isinstance(norm_w, torch.Tensor) or tuple(norm_w.shape) != (D,):
        ctx.fail("tiny_lm.layout.norm", cls=cls, D=D, expected=f"LayerNorm({D})", got=type(model.norm).__name__)
    if not any(n.startswith("blocks.") for n, _ in model.named_parameters()):  # missing, or a plain list
        ctx.fail("tiny_lm.layout.blocks_not_registered", cls=cls, N=N,
                 names=", ".join(n for n, _ in list(model.named_parameters())[:5]))
    blocks = ctx.attribute(model, "blocks", say("tiny_lm.layout.blocks_layer", N=N))
    if not isinstance(blocks, (nn.ModuleList, nn.Sequential)) or len(blocks) != N:
        ctx.fail("tiny_lm.layout.blocks_count", cls=cls, N=N,
                 got=say("tiny_lm.layout.blocks_of", kind=type(blocks).__name__, n=len(blocks))
                 if hasattr(blocks, "__len__") else type(blocks).__name__)
    head = ctx.linear(model, "lm_head", D, V, bias=False)
    emb = model.token_emb.weight
    if head.weight is not emb:
        same = tuple(head.weight.shape) == tuple(emb.shape) and torch.equal(head.weight.detach(), emb.detach())
        # A copy and a second Parameter over the same storage look alike here: .double() gives every Parameter a
        # storage of its own, and a graded model's parameters are mirrored one by one. One mistake names both.
        ctx.fail("tiny_lm.layout.not_tied", tried=_describe(V, L, D, H, N, d_ff),
                 got=say("tiny_lm.layout.equal_copy" if same else "tiny_lm.layout.two_tensors"),
                 mistake=MISTAKE.tied_by_copy if same else MISTAKE.weights_not_tied)


def _reference_model(ctx: Ctx, V, L, D, H, N, d_ff) -> nn.Module:
    """The reference TinyLM with the check's weights: every parameter random, LayerNorm weights around 1."""
    model = ref.TinyLM(V, L, D, H, N, d_ff).double()
    with torch.no_grad():
        for name, p in model.named_parameters():
            is_norm = p.dim() == 1 and ("norm" in name)
            base = 1.0 if is_norm and name.endswith("weight") else 0.0
            p.copy_(base + ctx.randn(*p.shape) * (0.2 if is_norm else 0.5))
    return model


def _load(ctx: Ctx, model: nn.Module, reference: nn.Module) -> None:
    """Copy the reference's parameters into the learner's model by name."""
    mine = dict(model.named_parameters())
    missing = [n for n, _ in reference.named_parameters() if n not in mine]
    if missing:
        ctx.fail("tiny_lm.load.missing", cls=type(model).__name__, name=missing[0],
                 more=say("tiny_lm.load.and_more", n=len(missing) - 1) if len(missing) > 1 else "",
                 names=", ".join(list(mine)[:6]) + (", ..." if len(mine) > 6 else ""))
    with torch.no_grad():
        for name, p in reference.named_parameters():
            if tuple(mine[name].shape) != tuple(p.shape):
                ctx.fail("tiny_lm.load.shape", name=name, shape=fmt_shape(mine[name].shape),
                         expected=fmt_shape(p.shape))
            mine[name].copy_(p)


def _variants(reference: nn.Module, ids: torch.Tensor):
    """Known wrong forwards of the reference (mistake, logits) pairs."""
    T = ids.size(1)
    pos = reference.pos_emb(torch.arange(T))  # (T, D)
    tok = reference.token_emb(ids)  # (B, T, D)
    mask = ref_attention.causal_mask(T)

    def run(x, m=mask, final_norm=True):
        return _run_reference(reference, x, m, final_norm)  # (B, T, V)
    with torch.no_grad():
        right = run(tok + pos)
        out = [(MISTAKE.no_final_norm, run(tok + pos, final_norm=False)), (MISTAKE.positions_not_added, run(tok)),
               (MISTAKE.no_causal_mask, run(tok + pos, m=None)),
               (MISTAKE.embedding_scaled, run(tok * math.sqrt(tok.size(-1)) + pos)),
               (MISTAKE.softmax_before_loss, right.softmax(-1))]
        if int(ids.max()) < reference.max_seq_len:  # pos_emb(input_ids) runs when every id is a valid position
            out.append((MISTAKE.positions_from_token_ids, run(tok + reference.pos_emb(ids))))
        return out


def _forward(ctx: Ctx, model, ids, tried, labels=None, mistake_if_raises=None):
    args = (ids,) if labels is None else (ids, labels)
    out = ctx.call(model, *args, what=say("core.forward_called", tried=tried), names=("input_ids", "labels"),
                   mistake_if_raises=mistake_if_raises)
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        ctx.fail("tiny_lm.forward.not_a_pair", tried=tried,
                 got=say("core.got_none") if out is None else
                 (say("tiny_lm.forward.one_tensor", shape=fmt_shape(out.shape)) if isinstance(out, torch.Tensor)
                  else type(out).__name__),
                 mistake=MISTAKE.missing_return if out is None else None)
    B, T = ids.shape
    V = model.token_emb.weight.shape[0]
    logits = ctx.tensor(out[0], say("tiny_lm.forward.logits"), (B, T, V), tried=tried,
                        hint=say("tiny_lm.forward.logits_shape_hint"))
    return logits, out[1]


def _first_forward(ctx: Ctx, model, reference, ids, tried):
    """The first forward; a crash is named by what the model does on other inputs (see :func:`_crash_mistake`)."""
    try:
        with torch.no_grad():
            return _forward(ctx, model, ids, tried)
    except CheckFailure as failure:
        if failure.mistake is not None or failure.message_id != "core.raised":
            raise
        mistake = _crash_mistake(model, reference, ids, failure.got or "")
        if mistake is None:
            raise
        raise ctx.renamed(failure, mistake=mistake) from None


def _crash_mistake(model, reference, ids, error: str) -> str | None:
    """Name a forward that crashed on ``ids`` (B, T), T < max_seq_len, by how it behaves on other inputs:

    - token ids all below max_seq_len (``ids % max_seq_len``) run, and give the logits of a model that adds
      ``pos_emb(input_ids)``: the positions were looked up with the token ids;
    - an input of exactly max_seq_len tokens runs and gives the reference's logits: something
      position-dependent was built for max_seq_len instead of T. The broadcast error then tells which: a
      mismatch on the (B, T, D) embeddings' dimension 1 is the position table, one deeper (the attention
      scores' key axis) is the mask.
    """
    L, V = reference.max_seq_len, reference.token_emb.weight.size(0)

    def logits_of(x):
        try:
            with torch.no_grad():
                out = model(x)
        except Exception:  # noqa: BLE001 - this only looks for a behaviour it can name
            return None
        out = out[0] if isinstance(out, (tuple, list)) and out else out
        return out if isinstance(out, torch.Tensor) else None

    small = ids % L  # (B, T): every token id a valid position too
    got = logits_of(small)
    if got is not None:
        with torch.no_grad():
            want = _run_reference(reference, reference.token_emb(small) + reference.pos_emb(small))
        if close(got, want, 1e-5):
            return MISTAKE.positions_from_token_ids
    full = (torch.arange(ids.size(0) * L).reshape(ids.size(0), L) * 7 + 3) % V  # (B, L)
    got = logits_of(full)
    if got is not None:
        with torch.no_grad():
            want, _ = reference(full)
        if close(got, want, 1e-5) and ids.size(1) < L:
            # the exception's own text (a learner frame may follow "; in "); the pattern is torch's words, not ours
            dim1 = re.search(r"non-singleton dimension 1\b", error.split("; in ")[0]) is not None  # code
            return MISTAKE.positions_for_max_seq_len if dim1 else MISTAKE.causal_mask_for_max_seq_len
    return None


def _run_reference(reference, x, mask="causal", final_norm=True):
    """The reference's blocks, final norm and lm_head on the embeddings ``x`` (B, T, D)."""
    m = ref_attention.causal_mask(x.size(1)) if isinstance(mask, str) else mask
    for block in reference.blocks:
        x = block(x, m)
    return reference.lm_head(reference.norm(x) if final_norm else x)  # (B, T, V)


def _check_causal(ctx, model, ids, logits, reference, tried) -> None:
    B, T = ids.shape
    V = logits.size(-1)
    t = T // 2
    later = ids.clone()
    later[:, t + 1:] = (ids[:, t + 1:] + 1 + torch.randint(V - 1, (B, T - t - 1), generator=ctx.gen)) % V
    with torch.no_grad():
        out, _ = _forward(ctx, model, later, say("tiny_lm.causal.tried", tried=tried, t=t))
    leak = (out[:, : t + 1] - logits[:, : t + 1]).abs().amax(-1)  # (B, t + 1)
    if bool((leak > 1e-9).any()):
        b, s = (int(i) for i in (leak > 1e-9).nonzero()[0])
        unmasked = dict(_variants(reference, ids))[MISTAKE.no_causal_mask]
        ctx.fail("tiny_lm.causal.leak", t=t, s=s, b=b, change=float(leak[b, s]), tried=tried,
                 mistake=MISTAKE.no_causal_mask if close(logits, unmasked) else None)


def _check_length(ctx, model, V, L, tried_model) -> None:
    ok = torch.randint(V, (1, L), generator=ctx.gen)
    try:
        with torch.no_grad():
            model(ok)
    except ValueError as e:
        ctx.fail("tiny_lm.length.refused_max", L=L, tried=say("tiny_lm.length.tried_max", model=tried_model, L=L),
                 got=f"ValueError: {e}", mistake=MISTAKE.length_check_off_by_one)
    except Exception:  # noqa: BLE001 - the main comparisons cover other failures
        pass
    long = torch.randint(V, (1, L + 1), generator=ctx.gen)
    tried = say("tiny_lm.length.tried_long", model=tried_model, n=L + 1)
    try:
        with torch.no_grad():
            model(long)
    except ValueError as e:
        if str(L) not in str(e) and "max_seq_len" not in str(e):
            ctx.fail("tiny_lm.length.limit_not_named", L=L, tried=tried, got=f"ValueError: {e}")
        return
    except Exception as e:  # noqa: BLE001
        ctx.fail("tiny_lm.length.wrong_error", error=type(e).__name__, tried=tried, got=f"{type(e).__name__}: {e}",
                 mistake=MISTAKE.no_length_check)
    ctx.fail("tiny_lm.length.accepted", tried=tried, mistake=MISTAKE.no_length_check)


def _check_step(ctx, model, reference, ids, tried) -> None:
    """One SGD step on both models (same loss): the tie holds, and the logits stay equal to the reference's."""
    model.zero_grad(set_to_none=True)
    reference.zero_grad(set_to_none=True)
    _, loss = _forward(ctx, model, ids, tried, labels=ids)
    if not isinstance(loss, torch.Tensor) or not loss.requires_grad:
        ctx.fail("tiny_lm.step.loss_no_gradient", tried=tried, mistake=MISTAKE.no_gradient)
    loss.backward()
    _, ref_loss = reference(ids, labels=ids)
    ref_loss.backward()
    grad = model.token_emb.weight.grad
    if grad is None or not bool((grad != 0).any()):
        ctx.fail("tiny_lm.step.no_gradient_to_embedding", tried=tried, mistake=MISTAKE.no_gradient)
    with torch.no_grad():  # torch.optim.SGD(m.parameters(), lr=0.5).step(), without importing torch.optim (slow)
        for m in (model, reference):
            for p in m.parameters():  # each tensor once, as an optimizer holds it
                if p.grad is not None:
                    p.sub_(0.5 * p.grad)
    if model.lm_head.weight is not model.token_emb.weight:
        ctx.fail("tiny_lm.step.untied", tried=tried, mistake=MISTAKE.tied_by_copy)
    with torch.no_grad():
        got, _ = _forward(ctx, model, ids, say("tiny_lm.step.tried_after", tried=tried))
        want, _ = reference(ids)
    if not within(got, want, 1e-5):
        ctx.fail("tiny_lm.step.logits_differ", err=float((got - want).abs().max()), tried=tried, mistake=MISTAKE.tied_by_copy)


def _std(ps) -> float:
    flat = torch.cat([p.detach().double().flatten() for p in ps])
    return float(flat.std())


def _norms(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """The LayerNorms: modules named norm, norm1, norm2 (the course's LayerNorm) or of class nn.LayerNorm."""
    return [(n, m) for n, m in model.named_modules()
            if n and (isinstance(m, nn.LayerNorm) or re.fullmatch(r"norm\d*", n.rsplit(".", 1)[-1]))
            and isinstance(getattr(m, "weight", None), torch.Tensor)]


def _check_norm_init(ctx: Ctx, model: nn.Module, tried: str) -> None:
    """On a fresh build every LayerNorm has weight 1 and bias 0 (GPT-2; nn.LayerNorm's own init)."""
    wrong = []  # (parameter, what its values are)
    for n, m in _norms(model):
        w, b = m.weight.detach(), getattr(m, "bias", None)
        if not bool((w == 1).all()):
            wrong.append((f"{n}.weight", say("tiny_lm.init.norm_weight", name=f"{n}.weight",
                                             mean=float(w.double().mean()), std=float(w.double().std()))))
        if isinstance(b, torch.Tensor) and not bool((b.detach() == 0).all()):
            wrong.append((f"{n}.bias", say("tiny_lm.init.norm_bias", name=f"{n}.bias",
                                           mean=float(b.detach().double().mean()))))
    if wrong:
        ctx.fail("tiny_lm.init.norm_reinitialised", name=wrong[0][0], tried=tried,
                 got="; ".join(words for _, words in wrong[:4]) + ("; ..." if len(wrong) > 4 else ""),
                 mistake=MISTAKE.layer_norm_reinitialised)


def _check_init(ctx: Ctx, cls) -> str:
    """GPT-2's initialisation, by statistics on a fresh build of the check's own (large enough) sizes, and the
    loss at init close to ln V."""
    V, L, D, H, N, d_ff = 300, 32, 48, 4, 3, 96
    torch.manual_seed(ctx.seed)  # the same draw on every run in the learner's kernel (@check restores the RNG)
    model = _build(ctx, cls, V, L, D, H, N, d_ff)
    tried = say("tiny_lm.init.tried", model=_describe(V, L, D, H, N, d_ff))
    named = dict(model.named_parameters())
    small = 0.02 / math.sqrt(2 * N)

    def near(value, target):
        return abs(value - target) <= 0.15 * target

    for name in ("token_emb", "pos_emb"):  # each on its own: pos_emb's few rows hide in a pooled std
        if f"{name}.weight" not in named:
            continue
        s = _std([named[f"{name}.weight"]])
        if not near(s, 0.02):
            ctx.fail("tiny_lm.init.embedding_std", name=name, std=s, tried=tried,
                     mistake=MISTAKE.embedding_default_init if s > 0.3 else MISTAKE.embedding_init_std_wrong)
    linears = [(n, m) for n, m in model.named_modules() if isinstance(m, nn.Linear) and n.startswith("blocks")]
    residual = [m.weight for n, m in linears if n.endswith(("attn.W_O", "ffn.linear2"))]
    others = [m.weight for n, m in linears if not n.endswith(("attn.W_O", "ffn.linear2"))]
    if others:
        s = _std(others)
        if not near(s, 0.02):
            # W_Q, W_K, W_V and linear1 all read D features: PyTorch's default U(-1/sqrt(D), 1/sqrt(D)) has std
            # 1/sqrt(3 D); the residual projections' small std everywhere is the scaled init applied to every layer
            mistake = (MISTAKE.residual_init_everywhere if near(s, small) else
                       MISTAKE.linear_not_gpt2_init if near(s, 1 / math.sqrt(3 * D)) else None)
            ctx.fail("tiny_lm.init.linear_std", std=s, tried=tried, mistake=mistake)
    if residual:
        s = _std(residual)
        if not near(s, small):
            # thousands of weights: a std 5% from 0.02 is 0.02 (the estimate's own error is under 1%)
            tight = abs(s - 0.02) <= 0.05 * 0.02
            ctx.fail("tiny_lm.init.residual_std", std=s, small=small, tried=tried,
                     mistake=MISTAKE.residual_init_not_scaled if tight else MISTAKE.residual_init_std_wrong)
    biases = [(n, m.bias) for n, m in linears if m.bias is not None]
    nonzero = [n for n, b in biases if bool((b != 0).any())]
    if nonzero:
        # only the residual projections' biases moved: the scaled init of the residual projections hit them too
        only_residual = all(n.endswith(("attn.W_O", "ffn.linear2")) for n in nonzero)
        names = ", ".join(n + ".bias" for n in nonzero[:4]) + (", ..." if len(nonzero) > 4 else "")
        ctx.fail("tiny_lm.init.bias_not_zero", name=nonzero[0], tried=tried,
                 got=say("tiny_lm.init.biases_not_zero_named", n=len(nonzero), total=len(biases), names=names)
                 if only_residual else say("tiny_lm.init.biases_not_zero", n=len(nonzero), total=len(biases)),
                 mistake=MISTAKE.residual_init_hit_biases if only_residual else MISTAKE.biases_not_zeroed)
    _check_norm_init(ctx, model, tried)
    ids = torch.randint(V, (4, L), generator=ctx.gen)
    with torch.no_grad():
        _, loss = _forward(ctx, model, ids, say("tiny_lm.init.tried_loss", tried=tried, L=L), labels=ids)
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        ctx.fail("tiny_lm.init.no_loss", tried=tried)
    if abs(loss.item() - math.log(V)) > 0.25:
        ctx.fail("tiny_lm.init.loss_far", loss=loss.item(), V=V, ln_v=math.log(V), tried=tried,
                 got=f"{loss.item():.3f}")
    return say("tiny_lm.init.loss_vs_ln_v", loss=loss.item(), ln_v=math.log(V))


@check
@_one_thread
def check_tiny_lm(ctx: Ctx, TinyLM) -> str:
    """Check ``TinyLM(vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff)``: the layout, tied weights
    (one Parameter, also after an optimizer step), logits ``(B, T, V)`` equal to the reference's with the same
    weights, causal by perturbation, the loss (label shift, ``ignore_index=-100``), a ``ValueError`` for inputs
    longer than ``max_seq_len``, the parameter count, GPT-2's initialisation and the loss at init ~ ln V."""
    cls = ctx.module_class(TinyLM, "TinyLM")
    V, L, D, H, N, d_ff, B, T = _lm_sizes(ctx.seed)
    described = _describe(V, L, D, H, N, d_ff)
    model = _build(ctx, cls, V, L, D, H, N, d_ff)
    _layout(ctx, model, V, L, D, H, N, d_ff)
    stored = getattr(model, "max_seq_len", None)
    if isinstance(stored, bool) or not isinstance(stored, int) or stored != L:
        ctx.fail("tiny_lm.max_seq_len_not_stored", cls=type(model).__name__, L=L, tried=described,
                 got=say("tiny_lm.no_max_seq_len") if not hasattr(model, "max_seq_len") else f"{stored!r}",
                 mistake=MISTAKE.max_seq_len_not_stored)
    reference = _reference_model(ctx, V, L, D, H, N, d_ff)
    _load(ctx, model, reference)
    ids = torch.randint(V, (B, T), generator=ctx.gen)
    tried = say("tiny_lm.tried", model=described, ids=fmt_shape(ids.shape), seed=ctx.seed)
    logits, loss = _first_forward(ctx, model, reference, ids, tried)
    with torch.no_grad():
        want, _ = reference(ids)
    if loss is not None:
        ctx.fail("tiny_lm.loss_without_labels", loss=repr(loss), tried=tried, expected="(logits, None)")
    _check_causal(ctx, model, ids, logits, reference, tried)
    compare(ctx, logits, want, say("tiny_lm.logits.what"), tried,
            None if within(logits, want) else _variants(reference, ids),
            axes=("batch", "position", "vocabulary_entry"), fallback=say("tiny_lm.logits.fallback"))

    for ignored in (False, True):
        labels = _labels(ctx, B, T, V, ignored)
        t2 = say("tiny_lm.tried_labels", tried=tried,
                 labels=say("tiny_lm.labels_ignored" if ignored else "tiny_lm.labels_token_ids"))
        with torch.no_grad():
            logits2, loss = _forward(ctx, model, ids, t2, labels=labels,
                                     mistake_if_raises=MISTAKE.ignored_targets_scored if ignored else None)
        if loss is None:
            ctx.fail("tiny_lm.no_loss", tried=t2, expected="(logits, loss)", got="(logits, None)")
        _check_loss_value(ctx, loss, want, labels, t2)

    _check_length(ctx, model, V, L, described)
    n, want_n = count_params(model), count_params(reference)
    if n != want_n:
        known = {n_ for n_, _ in reference.named_parameters()}
        extra = [f"{n_} {fmt_shape(p.shape)}" for n_, p in model.named_parameters() if n_ not in known]
        ctx.fail("tiny_lm.param_count", tried=described, expected=f"{want_n:,}",
                 got=say("tiny_lm.param_count_extra", n=n, extra=", ".join(extra)) if extra else f"{n:,}")
    _check_step(ctx, model, reference, ids, tried)
    at_init = _check_init(ctx, cls)
    return say("tiny_lm.passed", at_init=at_init)


# --------------------------------------------------------------------------- parameter_table

def _table_cases(seed: int):
    D1, N1, V1, L1 = (16, 2, 40, 12) if seed == 0 else (12 + 4 * (seed % 2), 3, 37, 10)
    D2, N2, V2, L2 = (24, 1, 50, 8) if seed == 0 else (20, 2, 45, 9)
    tied = ref.TinyLM(V1, L1, D1, 2, N1, 3 * D1)
    for block in tied.blocks:  # a persistent buffer, as nanoGPT's attention keeps its mask: state, not a parameter
        block.attn.register_buffer("causal", ref_attention.causal_mask(L1))
    return [
        (say("parameter_table.case.tied", model=f"TinyLM({V1}, {L1}, {D1}, 2, {N1}, {3 * D1})", L=L1), tied),
        (f"TinyLM({V2}, {L2}, {D2}, 4, {N2}, {4 * D2}, tie_weights=False)",
         ref.TinyLM(V2, L2, D2, 4, N2, 4 * D2, tie_weights=False)),
        (say("parameter_table.case.no_positions",
             model=f"TinyLM({V1}, {L1}, {D1}, 2, {N1}, {4 * D1}, positions='none')"),
         ref.TinyLM(V1, L1, D1, 2, N1, 4 * D1, positions="none")),
        (say("parameter_table.case.frozen_positions",
             model=f"TinyLM({V2}, {L2}, {D2}, 4, {N2}, {4 * D2}, positions='sinusoidal')"),
         ref.TinyLM(V2, L2, D2, 4, N2, 4 * D2, positions="sinusoidal")),
    ]


def _table_variants(model) -> list[tuple[str, dict]]:
    right = ref.parameter_table(model)
    n = lambda m: 0 if m is None else count_params(m)  # noqa: E731
    trainable = lambda m: 0 if m is None else count_params(p for p in m.parameters() if p.requires_grad)  # noqa: E731
    cfg = model.config
    V, D, N = cfg["vocab_size"], cfg["d_model"], cfg["num_layers"]
    head = n(model.lm_head)
    dup = sum(p.numel() for _, p in model.named_parameters(remove_duplicate=False))
    tr = {k: trainable(getattr(model, k)) for k in TABLE_KEYS[:-1]}
    bufs = lambda m: 0 if m is None else count_params(m.buffers())  # noqa: E731
    with_bufs = {k: right[k] + (0 if k == "lm_head" and right[k] == 0 else bufs(getattr(model, k)))
                 for k in TABLE_KEYS[:-1]}
    out = []
    if bufs(model):
        out += [(MISTAKE.buffers_counted, {**with_bufs, "total": total})
                for total in (sum(with_bufs.values()), right["total"] + bufs(model), right["total"])]
    return out + [
        (MISTAKE.tied_weight_counted_twice, {**right, "lm_head": head, "total": dup}),
        (MISTAKE.tied_weight_counted_twice, {**right, "lm_head": head}),
        (MISTAKE.tied_weight_counted_twice, {**right, "lm_head": head, "total": right["total"] + head - right["lm_head"]}),
        (MISTAKE.tied_weight_counted_twice, {**right, "total": dup}),
        (MISTAKE.table_from_formula, {**right, "blocks": 12 * N * D * D}),
        (MISTAKE.table_from_formula, {**right, "total": 12 * N * D * D + V * D}),
        (MISTAKE.table_from_formula, {**right, "blocks": 12 * N * D * D, "total": 12 * N * D * D + V * D}),
        (MISTAKE.table_trainable_only, {**tr, "lm_head": 0 if model.lm_head.weight is model.token_emb.weight else tr["lm_head"],
                                "total": trainable(model)}),
        (MISTAKE.table_trainable_only, {**right, "pos_emb": tr["pos_emb"],
                                "total": trainable(model)}),
    ]


@check
@_one_thread
def check_parameter_table(ctx: Ctx, parameter_table) -> str:
    """Check ``parameter_table(model) -> {"token_emb", "pos_emb", "blocks", "norm", "lm_head", "total"}``
    (plain ints, every parameter counted once) on reference TinyLMs: tied, untied, without positions and with
    frozen sinusoidal positions; the models must come back unchanged."""
    fn = ctx.function(parameter_table, "parameter_table")
    for label, model in _table_cases(ctx.seed):
        tried = f"model = {label}"
        before = _snapshot(model)
        none = model.pos_emb is None
        got = ctx.call(fn, model, what=say("core.called_with", tried=tried),
                       mistake_if_raises=MISTAKE.none_part_not_handled if none else None)
        changed = _changes(before, model)
        if changed:
            ctx.fail("parameter_table.model_changed", tried=tried, got="; ".join(changed[:3]), mistake=MISTAKE.model_changed)
        if not isinstance(got, dict):
            # a missing return gets this exercise's wording of its hint: a mistake_hint, not a hint table (hints()
            # gives its texts unformatted, and this one quotes a dict, in braces)
            ctx.fail("parameter_table.not_a_dict", keys=", ".join(TABLE_KEYS), tried=tried,
                     got=say("core.got_none") if got is None else type(got).__name__,
                     mistake=MISTAKE.missing_return if got is None else None,
                     mistake_hint=say("parameter_table.end_with_return") if got is None else None,
                     hint="return {" + ", ".join(f'"{k}": ...' for k in TABLE_KEYS) + "}")
        missing = [k for k in TABLE_KEYS if k not in got]
        if missing:
            ctx.fail("parameter_table.missing_keys", missing=", ".join(map(repr, missing)), tried=tried,
                     want=", ".join(map(repr, TABLE_KEYS)), have=", ".join(map(repr, got)))
        for k in TABLE_KEYS:
            if not (isinstance(got[k], int) and not isinstance(got[k], bool)):
                ctx.fail("parameter_table.not_an_int", key=repr(k), tried=tried,
                         got=f"{got[k]!r} ({type(got[k]).__name__})")
        expected = ref.parameter_table(model)
        values = {k: got[k] for k in TABLE_KEYS}
        if values != expected:
            k = next(k for k in TABLE_KEYS if values[k] != expected[k])
            mistake = next((m for m, v in _table_variants(model) if v == values), None)
            ctx.fail("parameter_table.wrong_count", key=repr(k), tried=tried,
                     expected=", ".join(f"{n} {expected[n]:,}" for n in TABLE_KEYS),
                     got=", ".join(f"{n} {values[n]:,}" for n in TABLE_KEYS), mistake=mistake)
    return say("parameter_table.passed")
