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

from ._core import MISTAKES, Ctx, check, known_mistake, reference

ref_tok = reference("tokenizer")
ref_train = reference("train")

__all__ = ["check_char_tokenizer", "check_word_tokenizer", "check_train_step", "check_evaluate",
           "check_perplexity"]

# ---- the mistakes these checks can name
VOCAB_NOT_SORTED = known_mistake("vocab_not_sorted")
VOCAB_NOT_UNIQUE = known_mistake("vocab_not_unique")
VOCAB_MISSING = known_mistake("vocab_missing_chars")
IDS_OFF_BY_ONE = known_mistake("ids_off_by_one")
ROUND_TRIP = known_mistake("round_trip_broken")
UNKNOWN_RAISES = known_mistake("unknown_word_raises")
UNKNOWN_DROPPED = known_mistake("unknown_word_dropped")
UNK_AS_PAD = known_mistake("unknown_as_pad")
NO_EOS = known_mistake("eos_missing")
EOS_MISPLACED = known_mistake("eos_misplaced")
SPLIT_ON_WHITESPACE = known_mistake("split_on_whitespace")
PUNCTUATION_DROPPED = known_mistake("punctuation_dropped")
LOWERCASED = known_mistake("lowercased")

WRONG_ORDER = known_mistake("wrong_step_order")
NO_ZERO_GRAD = known_mistake("no_zero_grad")
NO_CLIPPING = known_mistake("no_clipping")
CLIP_AFTER_STEP = known_mistake("clip_after_step")
MAX_NORM_IGNORED = known_mistake("max_grad_norm_ignored")
NORM_TYPE_WRONG = known_mistake("clip_norm_type_wrong")
MAX_NORM_DEFAULT = known_mistake("max_grad_norm_default_wrong")
NO_STEP = known_mistake("no_optimizer_step")
TRAIN_MODE_NOT_SET = known_mistake("train_mode_not_set")
GRAD_NORM_AFTER_CLIP = known_mistake("grad_norm_after_clipping")
LABELS_PASSED = known_mistake("labels_passed_to_model")
LOSS_AS_TENSOR = known_mistake("loss_not_a_float")

EVAL_IN_TRAIN_MODE = known_mistake("evaluate_in_train_mode")
EVAL_WITH_GRAD = known_mistake("evaluate_with_grad")
MODE_NOT_RESTORED = known_mistake("mode_not_restored")
MEAN_OF_MEANS = known_mistake("mean_of_batch_means")
IGNORED_COUNTED = known_mistake("ignored_tokens_counted")
WEIGHTED_BY_ROWS = known_mistake("batch_means_weighted_by_rows")
RETURNED_PERPLEXITY = known_mistake("evaluate_returned_perplexity")
EVAL_RETURNED_TENSOR = known_mistake("evaluate_returned_tensor")
PPL_RETURNED_TENSOR = known_mistake("perplexity_returned_tensor")
PPL_BASE_2 = known_mistake("perplexity_base_2")
PPL_NEGATED = known_mistake("perplexity_negated")

# leading and trailing whitespace, \r\n and blank lines are text too: the round trip must keep them
CHAR_TEXTS = [" héllo wörld\r\n→ zebra, ABBA!\n", "\tthe cat sat.\n\tMaß ≠ mass ☕ ", "zyx wvu\n\nzz yy: 42 → 24\r\n"]


def _ids_list(ctx: Ctx, ids, what: str, tried: str) -> list[int]:
    """``ids`` as a list of Python ints: a list/tuple of ints, or a 1-D integer tensor."""
    if ids is None:
        ctx.fail(f"{what} is None", tried=tried, expected="a list of int", mistake="missing_return")
    if isinstance(ids, torch.Tensor):
        if ids.dim() != 1 or ids.is_floating_point():
            ctx.fail(f"{what} is a tensor of shape {tuple(ids.shape)} and dtype {ids.dtype}", tried=tried,
                     expected="a list of int (or a 1-D integer tensor)",
                     hint="return a flat list of int ids, one per token")
        return [int(i) for i in ids.tolist()]
    if not isinstance(ids, (list, tuple)) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        kinds = sorted({type(i).__name__ for i in ids}) if isinstance(ids, (list, tuple)) else [type(ids).__name__]
        ctx.fail(f"{what} is not a list of int", tried=tried, expected="a list of int",
                 got=("a list of " + ", ".join(kinds)) if isinstance(ids, (list, tuple)) else kinds[0],
                 hint="ids are ints: vocab positions, one per token")
    return list(ids)


# --------------------------------------------------------------------------- char_tokenizer

@check
def check_char_tokenizer(ctx: Ctx, fn) -> str:
    ctx.function(fn, "char_tokenizer")
    texts = CHAR_TEXTS[ctx.seed % 3:] + CHAR_TEXTS[:ctx.seed % 3]
    for text in texts:
        tried = f"char_tokenizer({text!r})"
        out = ctx.call(fn, text, what=f"called as {tried}")
        if out is None:
            ctx.fail("char_tokenizer returned None", tried=tried, expected="a pair (vocab, ids)",
                     mistake="missing_return")
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            ctx.fail("char_tokenizer did not return a pair (vocab, ids)", tried=tried,
                     expected="(vocab: list of characters, ids: list of int)", got=type(out).__name__,
                     hint="return vocab, ids")
        vocab, ids = out
        expected_vocab, expected_ids = ref_tok.char_tokenizer(text)
        if isinstance(vocab, str):
            vocab = list(vocab)
        if not isinstance(vocab, (list, tuple)) or not all(isinstance(c, str) and len(c) == 1 for c in vocab):
            ctx.fail("vocab is not a list of single characters", tried=tried,
                     expected=f"{expected_vocab[:8]} ... ({len(expected_vocab)} characters)",
                     got=repr(vocab)[:80], hint="vocab = sorted(set(text)) is a list of one-character strings")
        vocab = list(vocab)
        if len(set(vocab)) != len(vocab):
            dup = next(c for c in vocab if vocab.count(c) > 1)
            ctx.fail("the vocabulary has duplicates", tried=tried, expected="each character once",
                     got=f"{dup!r} {vocab.count(dup)} times", mistake=VOCAB_NOT_UNIQUE)
        if set(vocab) != set(expected_vocab):
            missing, extra = sorted(set(expected_vocab) - set(vocab)), sorted(set(vocab) - set(expected_vocab))
            ctx.fail("the vocabulary is not the set of the text's characters", tried=tried,
                     expected=f"{len(expected_vocab)} distinct characters",
                     got=f"{len(vocab)}; missing {missing[:6]!r}, extra {extra[:6]!r}", mistake=VOCAB_MISSING)
        if vocab != expected_vocab:
            ctx.fail("the vocabulary is not in sorted order", tried=tried,
                     expected=f"sorted(set(text)) = {expected_vocab[:10]}",
                     got=f"{vocab[:10]}", mistake=VOCAB_NOT_SORTED)
        ids = _ids_list(ctx, ids, "ids", tried)
        if ids == [i + 1 for i in expected_ids]:
            ctx.fail("the ids are one too high", tried=tried, expected=f"{expected_ids[:10]} ...",
                     got=f"{ids[:10]} ...", mistake=IDS_OFF_BY_ONE)
        if len(ids) != len(text):
            ctx.fail("there is not one id per character", tried=tried, expected=f"{len(text)} ids",
                     got=f"{len(ids)} ids", mistake=ROUND_TRIP)
        if ids != expected_ids:
            bad = next(t for t, (a, b) in enumerate(zip(ids, expected_ids)) if a != b)
            decoded = "".join(vocab[i] if 0 <= i < len(vocab) else "?" for i in ids)
            ctx.fail("decoding the ids does not give the text back", tried=tried,
                     expected=f"id {expected_ids[bad]} for character {bad} ({text[bad]!r})",
                     got=f"id {ids[bad]}; decoded text {decoded!r}", mistake=ROUND_TRIP)
    return (f"vocab = sorted(set(text)), one id per character, and the round trip on {len(texts)} texts "
            "with whitespace and unicode")


# --------------------------------------------------------------------------- word_encode

WORD_TRAIN = ("the cat sat on the mat. the dog sat on the log, and the cat saw the dog. "
              "a cat, a dog: the end at the café.")
WORD_TEXTS = ["The cat sat on the sofa, and the dog saw it.", "a zebra sat on the mat; the cat ran!",
              "the dog and the cat...  The café end?!", ""]  # runs of punctuation, a known non-ASCII word, no text


def _word_candidates(text: str, vocab: list[str]):
    """Known mistakes of word_encode on ``text``, alone and combined: (mistakes, ids) pairs, ``mistakes`` a
    tuple of ids (the first is the one named; the others are mentioned), fewest mistakes first."""
    from itertools import product

    stoi = {t: i for i, t in enumerate(vocab)}
    splits = [((), ref_tok.WORD_PATTERN.findall(text)), ((SPLIT_ON_WHITESPACE,), text.split()),
              ((LOWERCASED,), ref_tok.WORD_PATTERN.findall(text.lower())),
              ((SPLIT_ON_WHITESPACE, LOWERCASED), text.lower().split()),
              ((PUNCTUATION_DROPPED,), re.findall(r"\w+", text)),
              ((PUNCTUATION_DROPPED, LOWERCASED), re.findall(r"\w+", text.lower()))]
    lookups = [((), lambda ts: [stoi.get(t, 1) for t in ts]),
               ((UNKNOWN_DROPPED,), lambda ts: [stoi[t] for t in ts if t in stoi]),
               ((UNK_AS_PAD,), lambda ts: [stoi.get(t, 0) for t in ts])]
    eos = [((), lambda ids: ids + [2]), ((NO_EOS,), lambda ids: ids), ((EOS_MISPLACED,), lambda ids: [2] + ids),
           ((EOS_MISPLACED,), lambda ids: [2] + ids + [2])]
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
        tried = f"word_encode({text!r}, vocab) with vocab = {vocab[:6]} ... ({len(vocab)} tokens)"
        try:
            ids = fn(text, list(vocab))
        except (KeyError, ValueError, IndexError) as e:
            ctx.fail(f"your code raised {type(e).__name__} on a word that is not in the vocabulary", tried=tried,
                     got=f"{type(e).__name__}: {e}"[:120], mistake=UNKNOWN_RAISES)
        except Exception:  # noqa: BLE001 - let ctx.call report any other exception the usual way
            ids = ctx.call(fn, text, list(vocab), what=f"called as {tried}")
        ids = _ids_list(ctx, ids, "the ids", tried)
        expected = ref_tok.word_encode(text, vocab)
        if ids != expected:
            named = _word_mistakes(ctx, fn, vocab, text, ids)
            glued = [t for t in text.split() if ref_tok.WORD_PATTERN.fullmatch(t) is None]
            notes = [f"text.split() keeps {glued[:3]} as tokens" if SPLIT_ON_WHITESPACE in named and glued else "",
                     "and also " + "; and also ".join(MISTAKES[m] for m in named[1:]) if len(named) > 1 else ""]
            ctx.fail("the ids are not those of the reference" + "".join(f" ({n})" for n in notes if n),
                     tried=tried, expected=str(expected), got=str(ids), mistake=named[0] if named else None,
                     hint="split with WORD_PATTERN.findall(text), look each token up with stoi.get(token, 1) "
                          "(1 = '<unk>'), then append 2 ('<eos>')")
        unk_total += ids.count(1)
        n_total += len(ids) - 1
    return (f"tokens split by WORD_PATTERN, unknown words -> <unk> ({unk_total} of {n_total} here), one <eos> "
            f"at the end, on {len(texts)} texts")


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
        ctx.fail(f"{what} is a tensor", tried=tried, expected="a Python float",
                 got=(f"a tensor of shape {tuple(value.shape)}, dtype {value.dtype}"
                      + (f", value {float(value.detach().flatten()[0]):.6g}" if value.numel() else "")
                      + (", requires_grad=True" if value.requires_grad else "")),
                 mistake=mistake_if_tensor)
    if value is None:
        ctx.fail(f"{what} is None", tried=tried, expected="a Python float", mistake="missing_return")
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        ctx.fail(f"{what} is not a number", tried=tried, expected="a Python float", got=type(value).__name__,
                 hint="return float values (loss.item())")
    if not math.isfinite(value):  # NaN compares unequal to everything: `abs(nan - x) > tol` is False
        ctx.fail(f"{what} is {value}", tried=tried, expected="a finite float", got=repr(float(value)),
                 hint="every loss here is finite: print the losses you add up and what you divide by")
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
    tried = (f"train_step(model, (x, y), optimizer, {max_norm}) with a small LM (V={V}, D={D}) in eval mode "
             f"holding stale gradients, x, y ({B}, {T}) (2 targets -100), and an SGD optimizer that records "
             f"its calls; the gradient norm is {norm:.3f}")
    out = ctx.call(fn, model, (x, y), opt, max_norm, what=f"called as {tried}")
    steps = [e for e in opt.events if e["event"] == "step"]
    if not steps:
        ctx.fail("optimizer.step() was not called", tried=tried, expected="one call of optimizer.step()",
                 got="events: " + (", ".join(e["event"] for e in opt.events) or "none"), mistake=NO_STEP)
    if len(steps) > 1:
        ctx.fail(f"optimizer.step() was called {len(steps)} times", tried=tried, expected="one call",
                 hint="one train_step is one optimizer step")
    if not model.calls:
        ctx.fail("the model was never called", tried=tried, expected="one forward on x",
                 hint="logits, _ = model(x), then the loss against y")
    if any(c.get("labels") for c in model.calls):
        ctx.fail("the model was called with labels", tried=tried,
                 expected="logits, _ = model(x), then the loss of the logits against y",
                 got="model(x, labels=...)", mistake=LABELS_PASSED)
    if not any(c["training"] for c in model.calls):
        ctx.fail("the model ran in eval mode", tried=tried, expected="model.training True during the forward",
                 got="model.training False", mistake=TRAIN_MODE_NOT_SET)
    at_step = steps[0]["grads"]
    after = {n: (getattr(model, n).grad.clone() if getattr(model, n).grad is not None else None)
             for n in ("emb", "head")}
    got_norm = steps[0]["grad_norm"]
    events = ", ".join(e["event"] for e in opt.events)
    if not _same(at_step, clipped):
        if _same(at_step, grads):
            late = all(after[n] is not None for n in after) and _same(after, clipped)
            ctx.fail("optimizer.step() got unclipped gradients", tried=tried,
                     expected=f"gradient norm {max_norm} at step (clipped)", got=f"norm {got_norm:.4f}",
                     mistake=CLIP_AFTER_STEP if late else NO_CLIPPING)
        summed = {n: stale[n] + grads[n] for n in grads}
        total = math.sqrt(sum(float((g ** 2).sum()) for g in summed.values()))
        if _same(at_step, summed) or _same(at_step, _scaled(summed, min(1.0, max_norm / (total + 1e-6)))):
            ctx.fail("optimizer.step() got this batch's gradients plus the stale ones", tried=tried,
                     expected=f"this batch's gradients, clipped (norm {max_norm})", got=f"norm {got_norm:.4f}",
                     mistake=NO_ZERO_GRAD)
        if all(at_step[n] is None or not bool(at_step[n].any()) for n in at_step) or _same(at_step, stale):
            ctx.fail("optimizer.step() did not get this batch's gradients", tried=tried,
                     expected="loss.backward() and clipping before optimizer.step()",
                     got=f"gradients at step: {'none' if at_step['emb'] is None else 'stale or zero'}; "
                         f"optimizer calls in order: {events}", mistake=WRONG_ORDER)
        for p in (math.inf, 1.0):
            other = float(torch.linalg.vector_norm(torch.cat([g.flatten() for g in grads.values()]), p))
            if _same(at_step, _scaled(grads, min(1.0, max_norm / (other + 1e-6)))):
                ctx.fail(f"the gradients were clipped by their {'max' if p == math.inf else 'L1'} norm",
                         tried=tried, expected=f"global L2 norm {max_norm} at step",
                         got=f"L2 norm {got_norm:.4f}", mistake=NORM_TYPE_WRONG)
        ratio = got_norm / norm if norm else 0.0
        if _same(at_step, _scaled(grads, ratio)):
            ctx.fail(f"the gradients were clipped to norm {got_norm:.4f}", tried=tried,
                     expected=f"norm {max_norm} (max_grad_norm)", got=f"norm {got_norm:.4f}",
                     mistake=MAX_NORM_IGNORED)
        ctx.fail("optimizer.step() got gradients that are not those of the batch's loss", tried=tried,
                 expected=f"the gradients of F.cross_entropy(logits.reshape(-1, V), y.reshape(-1)), clipped to "
                          f"norm {max_norm}", got=f"norm {got_norm:.4f}",
                 hint="compare your loss line with the notebook's: cross-entropy of the (B*T, V) logits against "
                      "the (B*T,) targets, mean over the counted targets")
    if not isinstance(out, dict):
        ctx.fail("train_step did not return a dict", tried=tried, expected='{"loss": float, "grad_norm": float}',
                 got="None" if out is None else type(out).__name__,
                 mistake="missing_return" if out is None else None, hint='return {"loss": ..., "grad_norm": ...}')
    for key in ("loss", "grad_norm"):
        if key not in out:
            ctx.fail(f"the result has no key {key!r}", tried=tried, expected='{"loss": float, "grad_norm": float}',
                     got=f"keys {sorted(out)}", hint='return {"loss": loss.item(), "grad_norm": grad_norm.item()}')
    got_loss = _float(ctx, out["loss"], 'result["loss"]', tried, LOSS_AS_TENSOR)
    if abs(got_loss - loss) > 1e-6:
        ctx.fail('result["loss"] is not the batch\'s loss', tried=tried, expected=f"{loss:.6f}",
                 got=f"{got_loss:.6f}", hint="report the loss computed before the step: loss.item()")
    got_gn = _float(ctx, out["grad_norm"], 'result["grad_norm"]', tried, LOSS_AS_TENSOR)
    if abs(got_gn - norm) > 1e-6:
        ctx.fail('result["grad_norm"] is not the gradient norm before clipping', tried=tried,
                 expected=f"{norm:.6f}", got=f"{got_gn:.6f}",
                 mistake=GRAD_NORM_AFTER_CLIP if abs(got_gn - max_norm) < 1e-4 else None,
                 hint="grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)")
    expected_after = {n: before[n] - 0.1 * clipped[n] for n in before}
    now = {"emb": model.emb.detach(), "head": model.head.detach()}
    if not _same(now, expected_after):
        ctx.fail("the parameters after the step are not p - lr * clipped gradient", tried=tried,
                 expected="one SGD step with the clipped gradients", got="other parameters",
                 hint="call optimizer.step() once; do not change the parameters or .grad yourself")
    _check_default_max_norm(ctx, fn)
    return (f"train mode, zero_grad -> backward -> clip to {max_norm} -> step (checked with a spy optimizer), "
            "loss and the norm before clipping returned; without max_grad_norm, clipped to 1.0")


def _check_default_max_norm(ctx: Ctx, fn) -> None:
    """``train_step`` called without ``max_grad_norm`` clips to the signature's default, 1.0."""
    x, y = _batch(ctx, 3, 4)
    for seed in range(ctx.seed + 1, ctx.seed + 100):  # a model whose gradient norm is well above 1.0
        model = ProbeLM(V, D, seed=seed)
        _, grads, norm = _loss_and_grads(model, x, y)
        if norm > 1.5:
            break
    opt = SpyOptimizer(model, lr=0.1)
    tried = f"train_step(model, (x, y), optimizer) without max_grad_norm; the gradient norm is {norm:.3f}"
    ctx.call(fn, model, (x, y), opt, what=f"called as {tried}")
    steps = [e for e in opt.events if e["event"] == "step"]
    if steps and not _same(steps[0]["grads"], _scaled(grads, 1.0 / (norm + 1e-6))):
        ctx.fail("without max_grad_norm the gradients were not clipped to norm 1.0", tried=tried,
                 expected="gradient norm 1.0 at step (the default max_grad_norm=1.0)",
                 got=f"norm {steps[0]['grad_norm']:.4f}", mistake=MAX_NORM_DEFAULT)


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
    return [(MEAN_OF_MEANS, sum(means) / len(means)), (IGNORED_COUNTED, sum(sums) / sum(all_tokens)),
            (IGNORED_COUNTED, sum(m * n for m, n in zip(means, all_tokens)) / sum(all_tokens)),
            (WEIGHTED_BY_ROWS, sum(m * b for m, b in zip(means, rows)) / sum(rows)),
            (RETURNED_PERPLEXITY, math.exp(good)), (MEAN_OF_MEANS, math.exp(sum(means) / len(means)))]


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
        mode = "training" if training else "eval"
        tried = (f"evaluate(model, batches) on a small LM (V={V}, D={D}) in {mode} mode, {len(batches)} batches "
                 f"(x, y) of sizes {[s[:2] for s in sizes]} with {sum(s[2] for s in sizes)} targets -100 and some "
                 "targets 0")
        out = ctx.call(fn, model, list(batches), what=f"called as {tried}")
        if out is None:
            ctx.fail("the result is None", tried=tried, expected="a Python float", mistake="missing_return")
        if len(model.calls) != len(batches):
            ctx.fail(f"the model was called {len(model.calls)} times", tried=tried,
                     expected=f"once per batch ({len(batches)})", hint="loop over every batch once")
        if any(c.get("labels") for c in model.calls):
            ctx.fail("the model was called with labels", tried=tried,
                     expected="logits, _ = model(x), then the loss of the logits against y",
                     got="model(x, labels=...)", mistake=LABELS_PASSED)
        if any(c["training"] for c in model.calls):
            ctx.fail("the model ran in training mode", tried=tried, expected="model.training False during the "
                     "forwards", got="model.training True", mistake=EVAL_IN_TRAIN_MODE)
        if any(c["grad_enabled"] for c in model.calls) or (isinstance(out, torch.Tensor) and out.requires_grad):
            ctx.fail("the forwards ran with grad mode on", tried=tried, expected="torch.is_grad_enabled() False",
                     got="True", mistake=EVAL_WITH_GRAD)
        if model.training != training:
            ctx.fail(f"the model is left in {'training' if model.training else 'eval'} mode", tried=tried,
                     expected=f"{mode} mode, as it was before the call", mistake=MODE_NOT_RESTORED)
        got = _float(ctx, out, "the result", tried, EVAL_RETURNED_TENSOR)
        if abs(got - expected) > 1e-6:
            named = next((m for m, v in candidates if abs(v - got) <= 1e-6), None)
            ctx.fail("the result is not total loss / counted tokens", tried=tried, expected=f"{expected:.6f}",
                     got=f"{got:.6f}", mistake=named,
                     hint="sum F.cross_entropy(..., reduction='sum') over the batches, count (y != -100).sum(), "
                          "and divide once at the end")
    return ("eval mode under no_grad, the mode restored (from training and from eval), total loss / counted "
            "tokens with -100 ignored over batches of different sizes")


# --------------------------------------------------------------------------- perplexity

@check
def check_perplexity(ctx: Ctx, fn) -> str:
    ctx.function(fn, "perplexity")
    losses = [0.0, 1.0, math.log(V), 2.5 + ctx.seed / 10, 30.0]  # 30 nats: exp is 1e13, no cap may cut it

    def value_at(loss):
        tried = f"perplexity({loss!r})"
        return _float(ctx, ctx.call(fn, loss, what=f"called as {tried}"), "the result", tried, PPL_RETURNED_TENSOR)

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
            named = next((name for name, f in ((PPL_BASE_2, lambda v: 2 ** v), (PPL_NEGATED, lambda v: math.exp(-v)))
                          if same(got, f(float(loss))) and same(at_other, f(other))), None)
            ctx.fail("the result is not exp(loss)", tried=tried, expected=f"{expected:.9g}", got=f"{got:.9g}",
                     mistake=named, hint="perplexity = math.exp(loss), loss a mean cross-entropy in nats")
    return f"exp(loss) for losses {', '.join(f'{v:.3g}' for v in losses)} and a 0-dim tensor (log V -> V = {V})"
