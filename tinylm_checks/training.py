"""Stage 09 checks: the two tokenizers (``char_tokenizer``, ``word_encode``), ``train_step``, ``evaluate`` and
``perplexity``.

The tokenizer checks run the learner's function on texts of their own (characters first seen out of sorted
order, unicode, punctuation next to words, unknown and differently-cased words) and compare with the reference
(:mod:`tinylm_solutions.tokenizer`). ``train_step`` and ``evaluate`` run on probes
(:mod:`tinylm_checks.probes`): a small float64 language model that records the mode and grad mode of every
forward, and a spy SGD optimizer that records ``zero_grad`` and, at ``step``, the gradients it was given. So
the check sees the order of the steps (stale gradients left in before the call show a missing
``zero_grad``; unclipped gradients at ``step`` a missing or late clipping) without reading any code.
"""
from __future__ import annotations

import math
import re

import torch
import torch.nn.functional as F

from tinylm_checks.probes import ProbeLM, SpyOptimizer

from ._core import Ctx, check, fmt_values, reference
from ._text import MISTAKE, MISTAKES, say

ref_tok = reference("tokenizer")
ref_train = reference("train")

__all__ = ["check_char_tokenizer", "check_word_tokenizer", "check_train_step", "check_evaluate",
           "check_perplexity"]

# ---- the mistakes these checks can name


# leading and trailing whitespace, \r\n and blank lines are text too: the round trip must keep them
CHAR_TEXTS = [" héllo wörld\r\n→ zebra, ABBA!\n", "\tthe cat sat.\n\tMaß ≠ mass ☕ ", "zyx wvu\n\nzz yy: 42 → 24\r\n"]  # code


def _ids_list(ctx: Ctx, ids, what: str, tried: str) -> list[int]:
    """``ids`` as a list of Python ints: a list/tuple of ints, or a 1-D integer tensor."""
    if ids is None:
        ctx.fail("tokenizer.ids_none", what=what, tried=tried, mistake=MISTAKE.missing_return)
    if isinstance(ids, torch.Tensor):
        if ids.dim() != 1 or ids.is_floating_point():
            ctx.fail("tokenizer.ids_tensor", what=what, shape=tuple(ids.shape), dtype=ids.dtype, tried=tried)
        return [int(i) for i in ids.tolist()]
    if not isinstance(ids, (list, tuple)) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        kinds = sorted({type(i).__name__ for i in ids}) if isinstance(ids, (list, tuple)) else [type(ids).__name__]
        ctx.fail("tokenizer.ids_not_ints", what=what, tried=tried,
                 got=say("tokenizer.list_of", kinds=", ".join(kinds)) if isinstance(ids, (list, tuple)) else kinds[0])
    return list(ids)


# --------------------------------------------------------------------------- char_tokenizer

@check
def check_char_tokenizer(ctx: Ctx, fn) -> str:
    ctx.function(fn, "char_tokenizer")
    texts = CHAR_TEXTS[ctx.seed % 3:] + CHAR_TEXTS[:ctx.seed % 3]
    for text in texts:
        tried = f"char_tokenizer({text!r})"
        out = ctx.call(fn, text, what=say("core.called_as", tried=tried))
        if out is None:
            ctx.fail("char_tokenizer.none", tried=tried, mistake=MISTAKE.missing_return)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            ctx.fail("char_tokenizer.not_a_pair", tried=tried, got=type(out).__name__)
        vocab, ids = out
        expected_vocab, expected_ids = ref_tok.char_tokenizer(text)
        if isinstance(vocab, str):
            vocab = list(vocab)
        if not isinstance(vocab, (list, tuple)) or not all(isinstance(c, str) and len(c) == 1 for c in vocab):
            ctx.fail("char_tokenizer.vocab_not_chars", tried=tried, vocab_head=expected_vocab[:8],
                     n=len(expected_vocab), got=repr(vocab)[:80])
        vocab = list(vocab)
        if len(set(vocab)) != len(vocab):
            dup = next(c for c in vocab if vocab.count(c) > 1)
            ctx.fail("char_tokenizer.vocab_duplicates", tried=tried, char=repr(dup), count=vocab.count(dup),
                     mistake=MISTAKE.vocab_not_unique)
        if set(vocab) != set(expected_vocab):
            missing, extra = sorted(set(expected_vocab) - set(vocab)), sorted(set(vocab) - set(expected_vocab))
            ctx.fail("char_tokenizer.vocab_wrong_set", tried=tried, n_expected=len(expected_vocab), n_got=len(vocab),
                     missing=repr(missing[:6]), extra=repr(extra[:6]), mistake=MISTAKE.vocab_missing_chars)
        if vocab != expected_vocab:
            ctx.fail("char_tokenizer.vocab_not_sorted", tried=tried, vocab_head=expected_vocab[:10],
                     got=f"{vocab[:10]}", mistake=MISTAKE.vocab_not_sorted)
        ids = _ids_list(ctx, ids, say("char_tokenizer.ids"), tried)
        if ids == [i + 1 for i in expected_ids]:
            ctx.fail("char_tokenizer.ids_one_too_high", tried=tried, expected=f"{expected_ids[:10]} ...",
                     got=f"{ids[:10]} ...", mistake=MISTAKE.ids_off_by_one)
        if len(ids) != len(text):
            ctx.fail("char_tokenizer.ids_count", tried=tried, n_expected=len(text), n_got=len(ids), mistake=MISTAKE.round_trip_broken)
        if ids != expected_ids:
            bad = next(t for t, (a, b) in enumerate(zip(ids, expected_ids)) if a != b)
            decoded = "".join(vocab[i] if 0 <= i < len(vocab) else "?" for i in ids)
            ctx.fail("char_tokenizer.round_trip", tried=tried, want=expected_ids[bad], index=bad, char=repr(text[bad]),
                     got_id=ids[bad], decoded=repr(decoded), mistake=MISTAKE.round_trip_broken)
    return say("char_tokenizer.passed", n=len(texts))


# --------------------------------------------------------------------------- word_encode

WORD_TRAIN = ("the cat sat on the mat. the dog sat on the log, and the cat saw the dog. "  # code
              "a cat, a dog: the end at the café.")
WORD_TEXTS = ["The cat sat on the sofa, and the dog saw it.", "a zebra sat on the mat; the cat ran!",  # code
              "the dog and the cat...  The café end?!", ""]  # code: runs of punctuation, a known non-ASCII word, no text


def _word_candidates(text: str, vocab: list[str]):
    """Known mistakes of word_encode on ``text``, alone and combined: (mistakes, ids) pairs, ``mistakes`` a
    tuple of ids (the first is the one named; the others are mentioned), fewest mistakes first."""
    from itertools import product

    stoi = {t: i for i, t in enumerate(vocab)}
    splits = [((), ref_tok.WORD_PATTERN.findall(text)), ((MISTAKE.split_on_whitespace,), text.split()),
              ((MISTAKE.lowercased,), ref_tok.WORD_PATTERN.findall(text.lower())),
              ((MISTAKE.split_on_whitespace, MISTAKE.lowercased), text.lower().split()),
              ((MISTAKE.punctuation_dropped,), re.findall(r"\w+", text)),
              ((MISTAKE.punctuation_dropped, MISTAKE.lowercased), re.findall(r"\w+", text.lower()))]
    lookups = [((), lambda ts: [stoi.get(t, 1) for t in ts]),
               ((MISTAKE.unknown_word_dropped,), lambda ts: [stoi[t] for t in ts if t in stoi]),
               ((MISTAKE.unknown_as_pad,), lambda ts: [stoi.get(t, 0) for t in ts])]
    eos = [((), lambda ids: ids + [2]), ((MISTAKE.eos_missing,), lambda ids: ids), ((MISTAKE.eos_misplaced,), lambda ids: [2] + ids),
           ((MISTAKE.eos_misplaced,), lambda ids: [2] + ids + [2])]
    out = []
    for (m1, tokens), (m2, look), (m3, end) in product(splits, lookups, eos):
        if m1 + m2 + m3:
            out.append((m1 + m2 + m3, end(look(tokens))))
    return sorted(out, key=lambda c: len(c[0]))


def _word_mistakes(ctx: Ctx, fn, vocab: list[str], text: str, ids: list[int]) -> tuple:
    """The fewest known mistakes that give the learner's ``ids`` on ``text`` and their results on the other
    texts too (on one text two mistakes can agree: a glued "sofa," and a dropped "," are both unknown)."""
    found = [ms for ms, cand in _word_candidates(text, vocab) if cand == ids]
    fewest = {ms for ms in found if len(ms) == len(found[0])} if found else set()
    if len(fewest) > 1:
        for other in (t for t in WORD_TEXTS if t != text):
            try:
                got = fn(other, list(vocab))
            except Exception:  # noqa: BLE001 - only to tell mistakes apart; the failure is reported anyway
                continue
            found = [ms for ms in found if any(c == got for m, c in _word_candidates(other, vocab) if m == ms)]
    return found[0] if found else ()


@check
def check_word_tokenizer(ctx: Ctx, fn) -> str:
    ctx.function(fn, "word_encode")
    vocab = ref_tok.build_word_vocab(WORD_TRAIN)
    texts = WORD_TEXTS[ctx.seed % 3:] + WORD_TEXTS[:ctx.seed % 3]
    unk_total = n_total = 0
    for text in texts:
        tried = say("word_encode.tried", text=repr(text), vocab_head=vocab[:6], n=len(vocab))
        try:
            ids = fn(text, list(vocab))
        except (KeyError, ValueError, IndexError) as e:
            ctx.fail("word_encode.raises", error=type(e).__name__, tried=tried, got=f"{type(e).__name__}: {e}"[:120],
                     mistake=MISTAKE.unknown_word_raises)
        except Exception:  # noqa: BLE001 - let ctx.call report any other exception the usual way
            ids = ctx.call(fn, text, list(vocab), what=say("core.called_as", tried=tried))
        ids = _ids_list(ctx, ids, say("word_encode.ids"), tried)
        expected = ref_tok.word_encode(text, vocab)
        if ids != expected:
            named = _word_mistakes(ctx, fn, vocab, text, ids)
            glued = [t for t in text.split() if ref_tok.WORD_PATTERN.fullmatch(t) is None]
            also = say("word_encode.also_separator").join(MISTAKES[m] for m in named[1:])
            ctx.fail("word_encode.wrong_ids",
                     glued=say("word_encode.glued", tokens=glued[:3]) if MISTAKE.split_on_whitespace in named and glued else "",
                     also=say("word_encode.also", sentences=also) if len(named) > 1 else "",
                     tried=tried, expected=str(expected), got=str(ids), mistake=named[0] if named else None)
        unk_total += ids.count(1)
        n_total += len(ids) - 1
    return say("word_encode.passed", unk=unk_total, n=n_total, texts=len(texts))


# --------------------------------------------------------------------------- train_step

V, D = 11, 6


def _batch(ctx: Ctx, B: int, T: int, n_ignored: int = 0):
    x = torch.randint(V, (B, T), generator=ctx.gen)  # (B, T)
    y = torch.randint(V, (B, T), generator=ctx.gen)  # (B, T)
    if n_ignored:
        flat = y.view(-1)
        flat[torch.randperm(B * T, generator=ctx.gen)[:n_ignored]] = -100
    return x, y


def _loss_and_grads(model: ProbeLM, x, y):
    """The reference's loss and gradients on a copy of ``model``: (loss, {name: grad}, global norm)."""
    twin = ProbeLM(V, D)
    twin.absorb_probe_report({**model.probe_report(), "grads": {"emb": None, "head": None}, "calls": []})
    with torch.enable_grad():
        logits = twin(x)[0]  # (B, T, V)
        loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))
        loss.backward()
    grads = {"emb": twin.emb.grad.clone(), "head": twin.head.grad.clone()}
    norm = math.sqrt(sum(float((g ** 2).sum()) for g in grads.values()))
    return float(loss.detach()), grads, norm


def _same(a: dict, b: dict, atol: float = 1e-8) -> bool:
    return all(a.get(n) is not None and b.get(n) is not None and torch.allclose(a[n], b[n], atol=atol, rtol=1e-6)
               for n in ("emb", "head"))


def _scaled(grads: dict, c: float) -> dict:
    return {n: g * c for n, g in grads.items()}


def _float(ctx: Ctx, value, what: str, tried: str, mistake_if_tensor: str) -> float:
    if isinstance(value, torch.Tensor):
        ctx.fail("training.float_tensor", what=what, shape=tuple(value.shape), dtype=value.dtype,
                 value=say("training.float_tensor_value", value=float(value.detach().flatten()[0]))
                 if value.numel() else "",
                 requires_grad=say("training.float_tensor_requires_grad") if value.requires_grad else "",
                 tried=tried, mistake=mistake_if_tensor)
    if value is None:
        ctx.fail("training.float_none", what=what, tried=tried, mistake=MISTAKE.missing_return)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        ctx.fail("training.float_not_a_number", what=what, tried=tried, got=type(value).__name__)
    if not math.isfinite(value):  # NaN compares unequal to everything: `abs(nan - x) > tol` is False
        ctx.fail("training.float_not_finite", what=what, value=value, tried=tried, got=repr(float(value)))
    return float(value)


@check
def check_train_step(ctx: Ctx, fn) -> str:
    ctx.function(fn, "train_step")
    B, T = (3, 5) if ctx.seed % 2 == 0 else (4, 3)
    model = ProbeLM(V, D, seed=ctx.seed)
    x, y = _batch(ctx, B, T, n_ignored=2)
    loss, grads, norm = _loss_and_grads(model, x, y)
    max_norm = round(norm / 3, 3)  # clipping must act: the gradients are 3 times too large
    clip = min(1.0, max_norm / (norm + 1e-6))  # torch.nn.utils.clip_grad_norm_'s clip_coef
    clipped = _scaled(grads, clip)
    stale = {n: torch.randn(p.shape, generator=ctx.gen, dtype=torch.float64) for n, p in
             (("emb", model.emb), ("head", model.head))}
    model.emb.grad, model.head.grad = stale["emb"].clone(), stale["head"].clone()  # a previous step's
    model.eval()  # as after an evaluation
    before = {"emb": model.emb.detach().clone(), "head": model.head.detach().clone()}
    opt = SpyOptimizer(model, lr=0.1)
    tried = say("train_step.tried", max_norm=max_norm, V=V, D=D, B=B, T=T, norm=norm)
    out = ctx.call(fn, model, (x, y), opt, max_norm, what=say("core.called_as", tried=tried))
    steps = [e for e in opt.events if e["event"] == "step"]
    if not steps:
        ctx.fail("train_step.no_step", events=", ".join(e["event"] for e in opt.events) or say("train_step.no_events"),
                 tried=tried, mistake=MISTAKE.no_optimizer_step)
    if len(steps) > 1:
        ctx.fail("train_step.steps", n=len(steps), tried=tried)
    if not model.calls:
        ctx.fail("train_step.no_forward", tried=tried)
    if any(c.get("labels") for c in model.calls):  # the loss, the gradients and the step then mean nothing
        ctx.fail("training.labels_passed", tried=tried, mistake=MISTAKE.labels_passed_to_model)
    # From here on, slips that cannot explain one another are reported at once: the mode, the gradients at the
    # step, and what the result says. Wrong gradients explain a wrong reported norm (clip_grad_norm_ returns the
    # norm it saw) and wrong parameters after the step; unexplained wrong gradients may come from a wrong loss:
    # what follows from them is left out.
    with ctx.slips() as slip:
        if not any(c["training"] for c in model.calls):
            slip("train_step.eval_mode", tried=tried, mistake=MISTAKE.train_mode_not_set)
        with slip.caught() as gradients:
            _check_step_gradients(ctx, steps[0], model, opt, grads, clipped, stale, norm, max_norm, tried)
        if not isinstance(out, dict):
            ctx.fail("train_step.not_a_dict", tried=tried, got="None" if out is None else type(out).__name__,
                     mistake=MISTAKE.missing_return if out is None else None)
        for key in ("loss", "grad_norm"):
            if key not in out:
                ctx.fail("train_step.missing_key", key=repr(key), keys=sorted(out), tried=tried)
        if not gradients.failed or slip.found[-1].mistake is not None:
            with slip.caught():
                got_loss = _float(ctx, out["loss"], 'result["loss"]', tried, MISTAKE.loss_not_a_float)
                if abs(got_loss - loss) > 1e-6:
                    ctx.fail("train_step.wrong_loss", tried=tried, expected=f"{loss:.6f}", got=f"{got_loss:.6f}")
        if not gradients.failed:
            with slip.caught():
                got_gn = _float(ctx, out["grad_norm"], 'result["grad_norm"]', tried, MISTAKE.loss_not_a_float)
                if abs(got_gn - norm) > 1e-6:
                    ctx.fail("train_step.wrong_grad_norm", tried=tried, expected=f"{norm:.6f}", got=f"{got_gn:.6f}",
                             mistake=MISTAKE.grad_norm_after_clipping if abs(got_gn - max_norm) < 1e-4 else None)
            expected_after = {n: before[n] - 0.1 * clipped[n] for n in before}
            now = {"emb": model.emb.detach(), "head": model.head.detach()}
            if not _same(now, expected_after):
                ctx.fail("train_step.wrong_parameters", tried=tried)
            with slip.caught():
                _check_default_max_norm(ctx, fn)
    return say("train_step.passed", max_norm=max_norm)


def _check_step_gradients(ctx: Ctx, step: dict, model, opt, grads, clipped, stale, norm: float, max_norm: float,
                          tried: str) -> None:
    """The gradients optimizer.step() got must be this batch's, clipped to ``max_norm``; name what they are."""
    at_step = step["grads"]
    after = {n: (getattr(model, n).grad.clone() if getattr(model, n).grad is not None else None)
             for n in ("emb", "head")}
    got_norm = step["grad_norm"]
    events = ", ".join(e["event"] for e in opt.events)
    if not _same(at_step, clipped):
        # the first row of emb's gradient, wanted and got: the norm alone can be the same (clipping makes it so)
        rows = {"want": fmt_values(clipped["emb"][0]),
                "row": say("train_step.grads_none") if at_step["emb"] is None else fmt_values(at_step["emb"][0])}
        if _same(at_step, grads):
            late = all(after[n] is not None for n in after) and _same(after, clipped)
            ctx.fail("train_step.unclipped", max_norm=max_norm, norm=got_norm, tried=tried,
                     mistake=MISTAKE.clip_after_step if late else MISTAKE.no_clipping)
        summed = {n: stale[n] + grads[n] for n in grads}
        total = math.sqrt(sum(float((g ** 2).sum()) for g in summed.values()))
        if _same(at_step, summed) or _same(at_step, _scaled(summed, min(1.0, max_norm / (total + 1e-6)))):
            ctx.fail("train_step.stale", max_norm=max_norm, norm=got_norm, tried=tried, mistake=MISTAKE.no_zero_grad,
                     **rows)
        if all(at_step[n] is None or not bool(at_step[n].any()) for n in at_step) or _same(at_step, stale):
            ctx.fail("train_step.wrong_order", events=events, tried=tried, mistake=MISTAKE.wrong_step_order,
                     grads=say("train_step.grads_none") if at_step["emb"] is None else say("train_step.grads_stale"))
        for p in (math.inf, 1.0):
            other = float(torch.linalg.vector_norm(torch.cat([g.flatten() for g in grads.values()]), p))
            if _same(at_step, _scaled(grads, min(1.0, max_norm / (other + 1e-6)))):
                ctx.fail("train_step.norm_type", max_norm=max_norm, norm=got_norm, tried=tried, mistake=MISTAKE.clip_norm_type_wrong,
                         norm_name=say("train_step.norm_max") if p == math.inf else say("train_step.norm_l1"))
        ratio = got_norm / norm if norm else 0.0
        if _same(at_step, _scaled(grads, ratio)):
            ctx.fail("train_step.other_max_norm", max_norm=max_norm, norm=got_norm, tried=tried,
                     mistake=MISTAKE.max_grad_norm_ignored)
        ctx.fail("train_step.other_grads", max_norm=max_norm, norm=got_norm, tried=tried, **rows)


def _check_default_max_norm(ctx: Ctx, fn) -> None:
    """``train_step`` called without ``max_grad_norm`` clips to the signature's default, 1.0."""
    x, y = _batch(ctx, 3, 4)
    for seed in range(ctx.seed + 1, ctx.seed + 100):  # a model whose gradient norm is well above 1.0
        model = ProbeLM(V, D, seed=seed)
        _, grads, norm = _loss_and_grads(model, x, y)
        if norm > 1.5:
            break
    opt = SpyOptimizer(model, lr=0.1)
    tried = say("train_step.tried_default", norm=norm)
    ctx.call(fn, model, (x, y), opt, what=say("core.called_as", tried=tried))
    steps = [e for e in opt.events if e["event"] == "step"]
    if steps and not _same(steps[0]["grads"], _scaled(grads, 1.0 / (norm + 1e-6))):
        ctx.fail("train_step.default_max_norm", norm=steps[0]["grad_norm"], tried=tried, mistake=MISTAKE.max_grad_norm_default_wrong)


# --------------------------------------------------------------------------- evaluate

def _eval_candidates(model: ProbeLM, batches):
    """Known evaluate mistakes: (mistake, value) pairs."""
    sums, counts, means, all_tokens, rows = [], [], [], [], []
    with torch.no_grad():
        for x, y in batches:
            logits = model(x)[0]  # (B, T, V)
            flat, target = logits.reshape(-1, V), y.reshape(-1)
            sums.append(float(F.cross_entropy(flat, target, reduction="sum")))
            counts.append(int((y != -100).sum()))
            means.append(float(F.cross_entropy(flat, target)))
            all_tokens.append(y.numel())
            rows.append(y.shape[0])
    model.calls.clear()
    good = sum(sums) / sum(counts)
    return [(MISTAKE.mean_of_batch_means, sum(means) / len(means)), (MISTAKE.ignored_tokens_counted, sum(sums) / sum(all_tokens)),
            (MISTAKE.ignored_tokens_counted, sum(m * n for m, n in zip(means, all_tokens)) / sum(all_tokens)),
            (MISTAKE.batch_means_weighted_by_rows, sum(m * b for m, b in zip(means, rows)) / sum(rows)),
            (MISTAKE.evaluate_returned_perplexity, math.exp(good)), (MISTAKE.mean_of_batch_means, math.exp(sum(means) / len(means)))]


@check
def check_evaluate(ctx: Ctx, fn) -> str:
    ctx.function(fn, "evaluate")
    # (B, T, targets -100): the lengths differ too, so that weighting by rows is not weighting by positions
    sizes = [(3, 4, 3), (1, 6, 0), (2, 5, 5)] if ctx.seed % 2 == 0 else [(2, 5, 4), (4, 3, 1), (1, 6, 0)]
    batches = [_batch(ctx, B, T, n) for B, T, n in sizes]
    for _, y in batches[:2]:  # token 0 is a token like any other (only -100 is ignored): make sure it occurs
        y.view(-1)[(y.view(-1) != -100).nonzero()[0]] = 0
    for training in (True, False):
        model = ProbeLM(V, D, seed=ctx.seed).train(training)
        expected = ref_train.evaluate(model, batches)
        candidates = _eval_candidates(model, batches)
        model.calls.clear()
        model.train(training)
        mode = say("evaluate.mode_training") if training else say("evaluate.mode_eval")
        tried = say("evaluate.tried", V=V, D=D, mode=mode, n_batches=len(batches), sizes=[s[:2] for s in sizes],
                    n_ignored=sum(s[2] for s in sizes))
        out = ctx.call(fn, model, list(batches), what=say("core.called_as", tried=tried))
        if out is None:
            ctx.fail("training.float_none", what=say("training.the_result"), tried=tried, mistake=MISTAKE.missing_return)
        if len(model.calls) != len(batches):
            ctx.fail("evaluate.calls", n=len(model.calls), n_batches=len(batches), tried=tried)
        if any(c.get("labels") for c in model.calls):  # the value then means nothing: one at a time up to here
            ctx.fail("training.labels_passed", tried=tried, mistake=MISTAKE.labels_passed_to_model)
        with ctx.slips() as slip:  # the mode, the grad mode, the mode left behind and the value: all independent
            if any(c["training"] for c in model.calls):
                slip("evaluate.train_mode", tried=tried, mistake=MISTAKE.evaluate_in_train_mode)
            if any(c["grad_enabled"] for c in model.calls) or (isinstance(out, torch.Tensor) and out.requires_grad):
                slip("evaluate.with_grad", tried=tried, got="True", mistake=MISTAKE.evaluate_with_grad)
            if model.training != training:
                slip("evaluate.mode_not_restored", mode=mode, tried=tried, mistake=MISTAKE.mode_not_restored,
                     left=say("evaluate.mode_training") if model.training else say("evaluate.mode_eval"))
            with slip.caught():
                got = _float(ctx, out, say("training.the_result"), tried, MISTAKE.evaluate_returned_tensor)
                if abs(got - expected) > 1e-6:
                    named = next((m for m, v in candidates if abs(v - got) <= 1e-6), None)
                    ctx.fail("evaluate.wrong_value", tried=tried, expected=f"{expected:.6f}", got=f"{got:.6f}",
                             mistake=named)
    return say("evaluate.passed")


# --------------------------------------------------------------------------- perplexity

@check
def check_perplexity(ctx: Ctx, fn) -> str:
    ctx.function(fn, "perplexity")
    losses = [0.0, 1.0, math.log(V), 2.5 + ctx.seed / 10, 30.0]  # 30 nats: exp is 1e13, no cap may cut it

    def value_at(loss):
        tried = f"perplexity({loss!r})"
        return _float(ctx, ctx.call(fn, loss, what=say("core.called_as", tried=tried)), say("training.the_result"),
                      tried, MISTAKE.perplexity_returned_tensor)

    def same(got, want):  # float32 arithmetic is accepted: the course's relative tolerance
        return math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9)

    for loss in [*losses, torch.tensor(1.25)]:
        tried = f"perplexity({loss!r})"
        got = value_at(loss)
        expected = ref_train.perplexity(loss)
        if not same(got, expected):
            # a formula is named only if it also gives the learner's value at a second loss (one value alone
            # cannot tell 2 ** loss from, say, int(exp(loss)) at loss = 1)
            other = 1.7 if float(loss) != 1.7 else 0.9
            at_other = value_at(other)
            named = next((name for name, f in ((MISTAKE.perplexity_base_2, lambda v: 2 ** v), (MISTAKE.perplexity_negated, lambda v: math.exp(-v)))
                          if same(got, f(float(loss))) and same(at_other, f(other))), None)
            ctx.fail("perplexity.wrong_value", tried=tried, expected=f"{expected:.9g}", got=f"{got:.9g}", mistake=named)
    return say("perplexity.passed", losses=", ".join(f"{v:.3g}" for v in losses), V=V)
