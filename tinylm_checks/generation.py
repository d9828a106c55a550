"""Stage 10 checks: autoregressive sampling, ``generate(model, idx, max_new_tokens, temperature, top_k, generator)``.

The check runs the learner's ``generate`` on a *scripted* language model (:class:`tinylm_checks.probes.ScriptedLM`):
its logits are a fixed table indexed by (position, token fed there), so the token a correct ``generate`` draws is
known exactly from what it fed the model, and every wrong context (not cropped, cropped from the front) or wrong
position (the first instead of the last) shows. The model records what it was fed, its train/eval mode and
whether autograd was recording. Six runs:

1. ``top_k=1`` past ``max_seq_len`` (greedy): the prompt kept, each call fed the last ``max_seq_len`` tokens,
   each new token the argmax of the last position's logits, eval mode and no autograd inside, the model's mode
   restored afterwards; equal to the reference.
2. ``torch.Generator``: the same seed gives the same tokens, another seed other tokens.
3. Temperature: one new token for a large batch of three prompts; the frequencies of the drawn tokens must fit
   ``softmax(logits / temperature)`` within ``|count - n p| <= 5 sqrt(n p (1 - p)) + 3`` for every token
   (deterministic: the check seeds the generator).
4. Top-k: the same with ``top_k = 3``: no token outside each row's 3 largest logits, all 3 drawn, frequencies
   fitting the renormalised softmax. The three prompts' logits have different offsets, so a threshold taken
   across the batch instead of per row keeps another number of tokens in some row.
5. Every step: three new tokens at temperature 0.6 for a batch of one-token prompts, on a model whose logits depend
   on the position only (so each step's tokens follow one known distribution): every step's frequencies must fit,
   not only the first's.
6. The defaults: generate called WITHOUT temperature and top_k on a vocabulary of 64 (> 50) with a flat-ish
   distribution: the frequencies must fit softmax(logits), per token and summed over 8 groups of tokens by rank, so
   a default top_k (Hugging Face's 50, or 5, 10, 20) or a default temperature != 1.0 shows.

Sampling as in nanoGPT's ``GPT.generate``; temperature: Ackley, Hinton & Sejnowski (1985); top-k: Fan, Lewis &
Dauphin (2018), "Hierarchical Neural Story Generation", §5.4.
"""
from __future__ import annotations

import math

import torch

from ._core import CheckFailure, Ctx, check, fmt_shape, known_mistake, reference
from .training import MODE_NOT_RESTORED

ref = reference("generate")

__all__ = ["check_generate"]

NO_CROPPING = known_mistake("context_not_cropped")
CROP_FROM_FRONT = known_mistake("context_cropped_from_front")
CROP_OFF_BY_ONE = known_mistake("context_crop_off_by_one")
FIRST_POSITION = known_mistake("sampled_from_first_position")
PROMPT_DROPPED = known_mistake("prompt_not_kept")
TRAIN_MODE = known_mistake("model_in_train_mode")
GRAD_ON = known_mistake("gradients_recorded")
GENERATOR_IGNORED = known_mistake("generator_ignored")
NO_GENERATOR_ARG = known_mistake("no_generator_argument")
GREEDY = known_mistake("greedy_instead_of_sampling")
TEMPERATURE_MULTIPLIED = known_mistake("temperature_multiplied")
TEMPERATURE_MISSING = known_mistake("temperature_not_applied")
TOP_K_IGNORED = known_mistake("top_k_ignored")
TOP_K_PLUS_ONE = known_mistake("top_k_keeps_k_plus_1")
TOP_K_MINUS_ONE = known_mistake("top_k_keeps_k_minus_1")
TOP_K_KEEPS_ONE = known_mistake("top_k_keeps_one")
ONLY_LAST_TOKEN = known_mistake("only_last_token_fed")
ROW0_PROBS = known_mistake("row_0_probabilities_for_every_row")
TEMPERATURE_FIRST_STEP = known_mistake("temperature_first_step_only")
WRONG_DEFAULT_TOP_K = known_mistake("wrong_default_top_k")
WRONG_DEFAULT_TEMPERATURE = known_mistake("wrong_default_temperature")
TOP_K_ZERO_FILL = known_mistake("top_k_filled_with_zero")
TOP_K_ACROSS_BATCH = known_mistake("top_k_across_batch")

Z = 5.0  # the frequencies' tolerance: |count - n p| <= Z sqrt(n p (1 - p)) + SLACK
SLACK = 3.0
N_PER_PROMPT = 1500
TOP_K = 3
N_STEPS_ROWS = 2000  # rows of the multi-step temperature run
DEFAULTS_V, DEFAULTS_ROWS = 64, 6000  # the defaults run: a vocabulary > 50 (HF's top_k=50 cuts), many rows


def _sizes(seed: int) -> tuple[int, int]:
    """(max_seq_len L, vocab size V): L != V, and V large enough for a top-3 with room around it."""
    return [(5, 11), (6, 9), (4, 13)][seed % 3]


def _table(ctx: Ctx, L: int, V: int) -> torch.Tensor:
    """(L, V, V) logits: each (position, token) row is a random permutation of evenly spaced values 3 ... -3
    (distinct, so argmax and the top-k are unambiguous), plus a little jitter and a random offset per row (which
    the softmax ignores, but a threshold taken across rows does not)."""
    values = torch.linspace(3.0, -3.0, V, dtype=torch.float64)
    perm = torch.rand(L, V, V, generator=ctx.gen, dtype=torch.float64).argsort(-1)  # (L, V, V)
    jitter = (torch.rand(L, V, V, generator=ctx.gen, dtype=torch.float64) - 0.5) * 0.1
    offset = (torch.rand(L, V, 1, generator=ctx.gen, dtype=torch.float64) - 0.5) * 4
    return (values[perm] + jitter + offset).float()


def _stub(table: torch.Tensor, training: bool = True):
    from .probes import ScriptedLM
    return ScriptedLM(table).train(training)


def _prompt(ctx: Ctx, B: int, T: int, V: int) -> torch.Tensor:
    return torch.randint(V, (B, T), generator=ctx.gen)


def _rows_alone_fine(generate, model, idx, n: int, kwargs: dict) -> bool:
    """Run generate on each distinct prompt of idx alone (B = 1; the first 4): True if none raises and every new
    token is among the top_k largest logits of the context it was drawn from. A mistake made row by row (a wrong
    threshold, a softmax over the wrong dimension) shows alone as it does in the batch; a threshold across the
    batch does not."""
    from .probes import ScriptedLM
    k = kwargs["top_k"]
    for r, row in enumerate(torch.unique(idx, dim=0)[:4]):
        stub = ScriptedLM(model.table).eval()
        try:
            out = generate(stub, row[None].clone(), n, **{**kwargs, "generator": torch.Generator().manual_seed(r)})
        except Exception:  # noqa: BLE001 - learner code may raise anything
            return False
        if not isinstance(out, torch.Tensor) or tuple(out.shape) != (1, idx.size(1) + n) or len(stub.calls) != n:
            return False
        for s, call in enumerate(stub.calls):
            fed = call["ids"]  # (1, Tc)
            logits = stub.table[fed.size(1) - 1, fed[0, -1]]  # (V,)
            if int(out[0, idx.size(1) + s]) not in torch.topk(logits, k).indices.tolist():
                return False
    return True


def _run(ctx: Ctx, generate, model, idx, n: int, what: str, **kwargs):
    """Call the learner's generate; an exception the scripted model raised (too long an input) or a missing
    generator parameter is named."""
    args = ", ".join([f"idx {fmt_shape(idx.shape)}", f"max_new_tokens={n}"]
                     + [f"{k}=" + ("a torch.Generator" if k == "generator" else repr(v)) for k, v in kwargs.items()])
    tried = (f"generate(model, {args}) on a scripted model with max_seq_len={model.max_seq_len}, "
             f"vocab_size={model.vocab_size} ({what}; seed {ctx.seed})")
    try:
        out = generate(model, idx.clone(), n, **kwargs)
    except Exception as e:  # noqa: BLE001 - learner code may raise anything
        msg = str(e)
        mistake = hint = None
        if "exceeds max_seq_len" in msg:
            mistake = NO_CROPPING
        elif isinstance(e, TypeError) and "generator" in msg:
            mistake = NO_GENERATOR_ARG
        elif isinstance(e, NotImplementedError) and not msg.strip():
            mistake = "not_implemented"
        elif "probability tensor contains" in msg and (kwargs.get("top_k") or 0) > 1 and \
                _rows_alone_fine(generate, model, idx, n, kwargs):
            # torch.multinomial got a row of nan in the batch, yet every row alone samples within its top-k: the
            # threshold was taken across the batch and cut some row whole
            mistake = TOP_K_ACROSS_BATCH
        else:
            hint = "run your generate on the tried: input in a cell of its own and read the full traceback"
        ctx.fail(f"your code raised {type(e).__name__} when generate was called", tried=tried,
                 got=f"{type(e).__name__}: {msg.splitlines()[0] if msg.strip() else ''}".rstrip(": "),
                 mistake=mistake, hint=hint)
    B, T = idx.shape
    if not isinstance(out, torch.Tensor):
        ctx.fail("generate did not return a tensor", tried=tried, expected=f"a long tensor {fmt_shape((B, T + n))}",
                 got="None (did you forget `return`?)" if out is None else type(out).__name__,
                 mistake="missing_return" if out is None else None, hint="return the whole sequence, idx")
    if tuple(out.shape) == (B, n) and n != T + n:
        ctx.fail("the output has the wrong shape: it holds only the new tokens", tried=tried,
                 expected=f"{fmt_shape((B, T + n))}: the prompt, then {n} new tokens", got=fmt_shape(out.shape),
                 mistake=PROMPT_DROPPED)
    if tuple(out.shape) != (B, T + n):
        ctx.fail("the output has the wrong shape", tried=tried, expected=f"{fmt_shape((B, T + n))}: the prompt, "
                 f"then {n} new tokens", got=fmt_shape(out.shape),
                 hint="add exactly one token per step to every row, max_new_tokens steps: torch.cat((idx, idx_next), dim=1)")
    if out.dtype != torch.long:
        ctx.fail(f"the output has dtype {out.dtype}", tried=tried, expected="torch.int64 (long) token ids",
                 got=str(out.dtype), hint="torch.multinomial and argmax return long ids: concatenate them to idx "
                 "as they are, without converting to float")
    if not torch.equal(out[:, :T], idx):
        row = int((out[:, :T] != idx).any(-1).nonzero()[0])
        ctx.fail("the output does not start with the prompt", tried=tried, expected=f"row {row} to start with "
                 f"{idx[row].tolist()}", got=f"{out[row, :T].tolist()}", mistake=PROMPT_DROPPED)
    if bool(((out < 0) | (out >= model.vocab_size)).any()):
        ctx.fail("the output holds ids outside the vocabulary", tried=tried, expected=f"ids in 0 .. {model.vocab_size - 1}",
                 got=f"{out.min().item()} .. {out.max().item()}", hint="draw ids with torch.multinomial over the vocabulary")
    return out, tried


def _modes(ctx: Ctx, model, tried: str, was_training: bool) -> None:
    if not model.calls:
        ctx.fail("generate never called the model", tried=tried, expected="one call of model(idx_cond) per new token",
                 got="no call", hint="the logits come from the model: logits, _ = model(idx_cond)")
    if any(c["training"] for c in model.calls):
        ctx.fail("the model was in training mode while generating", tried=tried + ", the model in training mode",
                 expected="every call of the model in eval mode", got="model.training was True",
                 mistake=TRAIN_MODE)
    if any(c["grad"] for c in model.calls):
        ctx.fail("autograd was recording while generating", tried=tried + ", called with autograd on",
                 expected="the model called under torch.no_grad()", got="torch.is_grad_enabled() was True",
                 mistake=GRAD_ON)
    if model.training != was_training:
        ctx.fail("generate changed the model's mode", tried=tried + f", the model in {'training' if was_training else 'eval'} mode",
                 expected=f"model.training == {was_training} after generate, as before",
                 got=f"model.training == {model.training}", mistake=MODE_NOT_RESTORED)


def _greedy_run(ctx: Ctx, generate, table) -> None:
    """Run 1: top_k=1 past max_seq_len: contexts, positions, prompt, modes, equal to the reference."""
    L, V = table.shape[0], table.shape[2]
    B, T, n = 3, 3, 2 * L
    model = _stub(table, training=True)
    idx = _prompt(ctx, B, T, V)
    gen = torch.Generator().manual_seed(1000 + ctx.seed)
    out, tried = _run(ctx, generate, model, idx, n, "top_k=1 is greedy decoding", temperature=0.8, top_k=1,
                      generator=gen)
    _modes(ctx, model, tried, was_training=True)
    calls = [c["ids"] for c in model.calls]
    if model.n_calls != n:
        ctx.fail(f"the model was called {model.n_calls} times for {n} new tokens", tried=tried,
                 expected=f"{n} calls, one per new token", got=f"{model.n_calls} calls",
                 hint="one call of the model per step of the loop, on the current (cropped) sequence")
    for s, fed in enumerate(calls):
        seq = out[:, :T + s]  # (B, T + s): what was there before step s
        right = seq[:, -L:]
        if tuple(fed.shape) == tuple(right.shape) and torch.equal(fed, right):
            continue
        got = f"ids {fmt_shape(fed.shape)}, row 0 {fed[0].tolist()}"
        expected = f"the last {L} tokens {fmt_shape(right.shape)}, row 0 {right[0].tolist()}"
        what = f"at step {s} (sequence length {T + s}) the model was fed the wrong context"
        if tuple(fed.shape) == (B, min(L, T + s)) and torch.equal(fed, seq[:, :L]):
            ctx.fail(what, tried=tried, expected=expected, got=got, mistake=CROP_FROM_FRONT)
        if T + s > 1 and tuple(fed.shape) == (B, 1) and torch.equal(fed, seq[:, -1:]):
            ctx.fail(what, tried=tried, expected=expected, got=got, mistake=ONLY_LAST_TOKEN)
        if T + s >= L and tuple(fed.shape) == (B, L - 1) and torch.equal(fed, seq[:, -(L - 1):]):
            ctx.fail(what, tried=tried, expected=expected, got=got, mistake=CROP_OFF_BY_ONE)
        ctx.fail(what, tried=tried, expected=expected, got=got,
                 hint="at every step feed the whole sequence so far, cropped to its last max_seq_len tokens: "
                      "idx[:, -model.max_seq_len:]")
    for s, fed in enumerate(calls):
        Tc = fed.size(1)
        logits = table[torch.arange(Tc)[None, :], fed].double()  # (B, Tc, V)
        best = logits[:, -1].argmax(-1)  # (B,)
        got = out[:, T + s]
        if torch.equal(got, best):
            continue
        row = int((got != best).nonzero()[0])
        first = logits[:, 0].argmax(-1)
        ctx.fail(f"with top_k=1, new token {s} of row {row} is not the most likely one", tried=tried,
                 expected=f"token {int(best[row])}, the argmax of the logits at the last position of the context "
                          f"{fed[row].tolist()}", got=f"token {int(got[row])}",
                 mistake=FIRST_POSITION if torch.equal(got, first) else None,
                 hint="top_k=1 keeps one token, the most likely one at the last position: logits[:, -1, :]")
    expected = ref.generate(_stub(table, training=False), idx, n, temperature=0)
    if not torch.equal(out, expected):  # cannot happen when the steps above pass; a guard for the reference
        ctx.fail("the greedy output differs from the reference", tried=tried, expected=str(expected[0].tolist()),
                 got=str(out[0].tolist()))


def _generator_run(ctx: Ctx, generate, table) -> None:
    """Run 2: the same generator seed gives the same tokens; another seed, other tokens."""
    L, V = table.shape[0], table.shape[2]
    B, T, n = 4, 2, L + 1
    idx = _prompt(ctx, B, T, V)
    outs = []
    for seed in (7 + ctx.seed, 7 + ctx.seed, 8 + ctx.seed):
        model = _stub(table, training=False)
        out, tried = _run(ctx, generate, model, idx, n, "sampling, torch.Generator().manual_seed(" f"{seed})",
                          temperature=1.0, top_k=None, generator=torch.Generator().manual_seed(seed))
        _modes(ctx, model, tried, was_training=False)
        outs.append(out)
    tried = (f"generate(model, idx {fmt_shape(idx.shape)}, max_new_tokens={n}, temperature=1.0) three times, with "
             f"generators seeded {7 + ctx.seed}, {7 + ctx.seed}, {8 + ctx.seed} (seed {ctx.seed})")
    if not torch.equal(outs[0], outs[1]):
        ctx.fail("the same generator seed gave different tokens", tried=tried,
                 expected="the same output for the same seed", got=f"row 0: {outs[0][0, T:].tolist()} then "
                 f"{outs[1][0, T:].tolist()}", mistake=GENERATOR_IGNORED)
    if torch.equal(outs[0], outs[2]):
        greedy = ref.generate(_stub(table, training=False), idx, n, temperature=0)
        ctx.fail("two different generator seeds gave the same tokens", tried=tried,
                 expected=f"different samples ({B} rows x {n} tokens drawn from distributions with no token above "
                          "p = 0.6)", got=f"the same output, row 0: {outs[0][0, T:].tolist()}",
                 mistake=GREEDY if torch.equal(outs[0], greedy) else GENERATOR_IGNORED)


def _top_k_probs(logits: torch.Tensor, k: int | None, temperature: float, threshold: torch.Tensor | None = None):
    """softmax(logits / temperature) over the tokens kept: the k largest of each row (or those >= threshold)."""
    z = logits / temperature
    if threshold is None and k is not None:
        threshold = torch.topk(z, k, dim=-1).values[:, [-1]]  # (G, 1)
    if threshold is not None:
        z = z.masked_fill(z < threshold, float("-inf"))
    return torch.softmax(z, dim=-1)


def _fits(counts: torch.Tensor, p: torch.Tensor, n: int) -> tuple[bool, tuple[int, int], float]:
    """Do the counts (G, V) fit the probabilities (G, V)? Also the worst cell and its excess in standard
    deviations (inf for a token drawn that has probability 0)."""
    sd = (n * p * (1 - p)).sqrt()
    excess = ((counts - n * p).abs() - SLACK) / sd.clamp_min(1e-12)
    excess = torch.where((p == 0) & (counts > 0), torch.full_like(excess, math.inf), excess)
    excess = torch.where((p == 0) & (counts == 0), torch.zeros_like(excess), excess)
    i = int(excess.argmax())
    cell = divmod(i, p.size(1))
    return bool(excess.max() <= Z), cell, float(excess.max())


def _sampling_run(ctx: Ctx, generate, table, temperature: float, top_k: int | None) -> None:
    """Runs 3 and 4: one new token for N_PER_PROMPT copies of each of three prompts; the drawn tokens'
    frequencies must fit softmax(logits / temperature) (top-k renormalised)."""
    L, V = table.shape[0], table.shape[2]
    G, T, n = 3, L - 1, N_PER_PROMPT
    last = torch.randperm(V, generator=ctx.gen)[:G]  # three different last tokens
    prompts = torch.cat([_prompt(ctx, G, T - 1, V), last[:, None]], dim=1)  # (G, T)
    table = table.clone()
    values = table[T - 1, last]  # (G, V)
    gap = 6.0 / (V - 1)  # between consecutive values of a row (jitter: at most 0.1 of it, < gap / 4)
    offsets = torch.tensor([[-0.75], [0.0], [0.75]]) * gap  # (G, 1): a threshold across the batch keeps 1 or 4+
    table[T - 1, last] = values - values.mean(-1, keepdim=True) + offsets  # tokens in some row, never none
    logits = table[T - 1, last].double()  # (G, V): the logits each prompt's next token is drawn from
    idx = prompts.repeat_interleave(n, dim=0)  # (G n, T)
    model = _stub(table, training=False)
    gen_seed = 100 + ctx.seed
    kwargs = dict(temperature=temperature, top_k=top_k, generator=torch.Generator().manual_seed(gen_seed))
    out, tried = _run(ctx, generate, model, idx, 1, f"{G} prompts x {n} copies, one new token each", **kwargs)
    _modes(ctx, model, tried, was_training=False)
    drawn = out[:, -1].view(G, n)  # (G, n)
    counts = torch.stack([torch.bincount(d, minlength=V) for d in drawn]).double()  # (G, V)
    expected = _top_k_probs(logits, top_k, temperature)  # (G, V)
    ok, (g, v), excess = _fits(counts, expected, n)
    if ok:
        return
    rule = f"|count - n p| <= {Z:g} sqrt(n p (1 - p)) + {SLACK:g} for every token, n = {n}"
    one_hot = torch.nn.functional.one_hot(logits.argmax(-1), V).double()  # (G, V)
    candidates = [(TOP_K_KEEPS_ONE, one_hot)] if top_k is not None and top_k > 1 else []
    candidates += [(GREEDY, one_hot),
                  (TEMPERATURE_MULTIPLIED, _top_k_probs(logits * temperature * temperature, top_k, temperature)),
                  (TEMPERATURE_MISSING, _top_k_probs(logits, top_k, 1.0))]
    if top_k is not None:
        z = logits / temperature
        kth = torch.topk(z, top_k, dim=-1).values[:, [-1]]  # (G, 1)
        candidates += [(TOP_K_IGNORED, _top_k_probs(logits, None, temperature)),
                       (TOP_K_PLUS_ONE, _top_k_probs(logits, top_k + 1, temperature)),
                       (TOP_K_MINUS_ONE, _top_k_probs(logits, top_k - 1, temperature)),
                       (TOP_K_ACROSS_BATCH, _top_k_probs(logits, None, temperature, kth.min())),
                       (TOP_K_ACROSS_BATCH, _top_k_probs(logits, None, temperature, kth.max())),
                       (TOP_K_ACROSS_BATCH, _top_k_probs(logits, None, temperature, kth[-1]))]
        candidates.append((TOP_K_ZERO_FILL, torch.softmax((logits / temperature).masked_fill(
            logits / temperature < kth, 0.0), dim=-1)))
    candidates.append((ROW0_PROBS, expected[:1].expand_as(expected)))
    mistake = next((m for m, p in candidates if _fits(counts, p, n)[0]), None)
    kept = (expected[g] > 0).sum().item()
    got_kept = int((counts[g] > 0).sum())
    if top_k is not None and bool(((expected == 0) & (counts > 0)).any()):
        g = int(((expected == 0) & (counts > 0)).any(-1).nonzero()[0])
        bad = ((expected[g] == 0) & (counts[g] > 0)).nonzero()[:, 0].tolist()
        problem = f"prompt {g}'s rows drew tokens {bad}, which are not among the {top_k} largest logits of their row"
    elif top_k is not None and bool(((expected > 0) & (counts == 0)).any()):
        g = int(((expected > 0) & (counts == 0)).any(-1).nonzero()[0])
        problem = f"prompt {g}'s rows never drew some of the {top_k} tokens top-k keeps"
    else:
        problem = f"the frequencies of the drawn tokens do not fit softmax(logits / temperature)" + \
                  (" over the top-k" if top_k is not None else "")
    freq = lambda row: "[" + ", ".join(f"{x:.3f}" for x in row.tolist()) + "]"  # noqa: E731
    ctx.fail(problem, tried=tried,
             expected=f"prompt {g}: frequencies near {freq(expected[g])} ({kept} distinct tokens kept; {rule})",
             got=f"{freq(counts[g] / n)} ({got_kept} distinct tokens drawn); token {v} is off by "
                 f"{'a probability of 0' if math.isinf(excess) else f'{excess + Z:.1f} standard deviations'}",
             mistake=mistake,
             hint="divide the logits of the last position by the temperature, keep the top_k largest of each row "
                  "(the rest -inf), softmax, then torch.multinomial(probs, 1, generator=generator)")


def _position_table(ctx: Ctx, L: int, V: int, spread: float) -> torch.Tensor:
    """(L, V, V) logits that depend on the position only (the same row whatever token is fed there): each position's
    row a random permutation of evenly spaced values spread ... -spread plus a little jitter. The tokens drawn at
    each step then follow one known distribution, whatever was drawn before."""
    values = torch.linspace(spread, -spread, V, dtype=torch.float64)
    rows = torch.stack([values[torch.randperm(V, generator=ctx.gen)] for _ in range(L)])  # (L, V)
    rows = rows + (torch.rand(L, V, generator=ctx.gen, dtype=torch.float64) - 0.5) * 0.01
    return rows[:, None, :].expand(L, V, V).float().contiguous()


def _freq(row: torch.Tensor) -> str:
    return "[" + ", ".join(f"{x:.3f}" for x in row.tolist()) + "]"


def _steps_run(ctx: Ctx, generate, L: int, V: int) -> None:
    """Run 5: STEPS new tokens at a temperature != 1 for N_STEPS_ROWS rows of a one-token prompt, on a model whose
    logits depend on the position only: the tokens of every step (not only the first) must fit
    softmax(logits / temperature)."""
    temperature, steps, n = 0.6, 3, N_STEPS_ROWS
    table = _position_table(ctx, L, V, 3.0)
    logits = table[:steps, 0].double()  # (steps, V): the logits of step s are those of position s
    idx = torch.randint(V, (1, 1), generator=ctx.gen).repeat(n, 1)  # (n, 1)
    model = _stub(table, training=False)
    kwargs = dict(temperature=temperature, top_k=None, generator=torch.Generator().manual_seed(200 + ctx.seed))
    out, tried = _run(ctx, generate, model, idx, steps, f"{n} copies of a 1-token prompt, {steps} new tokens each; "
                      "the model's logits depend on the position only", **kwargs)
    _modes(ctx, model, tried, was_training=False)
    counts = torch.stack([torch.bincount(out[:, 1 + s], minlength=V) for s in range(steps)]).double()  # (steps, V)
    expected = torch.softmax(logits / temperature, dim=-1)  # (steps, V)
    fits = [_fits(counts[s:s + 1], expected[s:s + 1], n) for s in range(steps)]
    if all(ok for ok, _, _ in fits):
        return
    s = next(s for s in range(steps) if not fits[s][0])  # the first step that does not fit
    (_, v), excess = fits[s][1:]
    plain = torch.softmax(logits, dim=-1)
    mistake = None
    if s > 0 and _fits(counts[:1], expected[:1], n)[0] and _fits(counts[1:], plain[1:], n)[0]:
        mistake = TEMPERATURE_FIRST_STEP
    ctx.fail(f"the tokens of step {s} do not fit softmax(logits / temperature)", tried=tried,
             expected=f"step {s}: frequencies near {_freq(expected[s])} (|count - n p| <= {Z:g} sqrt(n p (1 - p)) + "
                      f"{SLACK:g} for every token, n = {n})",
             got=f"{_freq(counts[s] / n)}; token {v} is off by "
                 f"{'a probability of 0' if math.isinf(excess) else f'{excess + Z:.1f} standard deviations'}",
             mistake=mistake,
             hint="every step is the same: crop, call the model, divide the last position's logits by the "
                  "temperature, filter top_k, softmax, draw")


def _binned(counts: torch.Tensor, p: torch.Tensor, n: int, bins: int) -> bool:
    """Do the counts (V,) fit p (V,) once the tokens are grouped by rank of p into `bins` equal groups (sums of many
    small cells show a small shift of the distribution that no single cell shows)?"""
    order = p.argsort(descending=True)
    return _fits(counts[order].view(1, bins, -1).sum(-1), p[order].view(1, bins, -1).sum(-1), n)[0]


def _defaults_run(ctx: Ctx, generate) -> None:
    """Run 6: generate(model, idx, 1, generator=...) WITHOUT temperature and top_k, on a model with a vocabulary of
    DEFAULTS_V > 50 tokens and a flat-ish distribution: the frequencies must fit softmax(logits), so a default top_k
    (5, 10, 20, 50: any cut) or a default temperature != 1 shows."""
    V, n, bins = DEFAULTS_V, DEFAULTS_ROWS, 8
    table = _position_table(ctx, 2, V, 2.0)
    logits = table[0, 0].double()  # (V,): the prompt is one token, at position 0
    idx = torch.randint(V, (1, 1), generator=ctx.gen).repeat(n, 1)  # (n, 1)
    model = _stub(table, training=False)
    gen = torch.Generator().manual_seed(300 + ctx.seed)
    args = f"idx {fmt_shape(idx.shape)}, max_new_tokens=1, generator=a torch.Generator"
    tried = (f"generate(model, {args}), without temperature and top_k, on a scripted model with max_seq_len=2, "
             f"vocab_size={V} (the defaults must be temperature=1.0, top_k=None; seed {ctx.seed})")
    try:
        out = generate(model, idx.clone(), 1, generator=gen)
    except Exception as e:  # noqa: BLE001 - learner code may raise anything
        msg = str(e)
        ctx.fail(f"your code raised {type(e).__name__} when generate was called without temperature and top_k",
                 tried=tried, got=f"{type(e).__name__}: {msg.splitlines()[0] if msg.strip() else ''}".rstrip(": "),
                 hint="give temperature and top_k their defaults: temperature=1.0, top_k=None")
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != (n, 2):
        ctx.fail("generate called without temperature and top_k returned something else", tried=tried,
                 expected=f"a long tensor {fmt_shape((n, 2))}",
                 got=fmt_shape(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__)
    counts = torch.bincount(out[:, 1].long().clamp(0, V - 1), minlength=V).double()  # (V,)
    expected = torch.softmax(logits, dim=-1)
    if _fits(counts[None], expected[None], n)[0] and _binned(counts, expected, n, bins):
        return
    order = logits.argsort(descending=True)
    drawn = int((counts > 0).sum())
    kept = int((counts[order] > 0).nonzero().max()) + 1  # the rank of the least likely token drawn
    mistake = None
    if kept < V and drawn == kept and n * float(expected[order[kept:]].sum()) > 30:
        mistake = WRONG_DEFAULT_TOP_K
        problem = f"only the {kept} most likely of the {V} tokens were drawn: the default top_k cuts the rest"
    else:
        problem = "the frequencies of the drawn tokens do not fit softmax(logits)"
        if any(_binned(counts, torch.softmax(logits / t, -1), n, bins) for t in (0.5, 0.6, 0.7, 0.8, 0.9, 1.25, 1.5, 2.0)):
            mistake = WRONG_DEFAULT_TEMPERATURE
    tail = V - kept if kept < V else 8
    ctx.fail(problem, tried=tried,
             expected=f"frequencies near softmax(logits), all {V} tokens drawn: the 8 most likely together about "
                      f"{float(expected[order[:8]].sum()):.3f}, the {tail} least likely together about "
                      f"{float(expected[order[-tail:]].sum()):.3f}",
             got=f"{drawn} distinct tokens drawn; the 8 most likely together {float(counts[order[:8]].sum()) / n:.3f}, "
                 f"the {tail} least likely together {float(counts[order[-tail:]].sum()) / n:.3f}",
             mistake=mistake)


@check
def check_generate(ctx: Ctx, generate) -> str:
    """Check ``generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None)`` on a scripted
    model (fixed logits that depend on the position and the token there; it records what it was fed): the prompt
    kept, the context cropped to the last ``max_seq_len`` tokens, the next token drawn from the last position,
    eval mode and no autograd inside with the mode restored, ``top_k=1`` equal to greedy decoding (and to the
    reference), reproducible with a ``torch.Generator``, and the frequencies of a large batch of samples equal to
    ``softmax(logits / temperature)`` (top-k renormalised, exactly k tokens per row) within a stated tolerance, at
    every step of a multi-token run, and, called without temperature and top_k, equal to ``softmax(logits)`` on a
    64-token vocabulary (the defaults temperature=1.0, top_k=None)."""
    generate = ctx.function(generate, "generate")
    L, V = _sizes(ctx.seed)
    table = _table(ctx, L, V)
    try:
        _greedy_run(ctx, generate, table)
    except CheckFailure as failure:
        if failure.mistake is not None:
            raise
        # top_k=1 went wrong in a way the greedy run cannot name (a top-k or temperature mistake makes other
        # tokens, or none): the sampling runs name such mistakes from the frequencies, so try them first
        for temperature, top_k in ((0.6, None), (1.5, TOP_K)):
            try:
                _sampling_run(ctx, generate, table, temperature=temperature, top_k=top_k)
            except CheckFailure as named:
                if named.mistake is not None:
                    raise named from None
        raise
    _generator_run(ctx, generate, table)
    _sampling_run(ctx, generate, table, temperature=0.6, top_k=None)
    _sampling_run(ctx, generate, table, temperature=1.5, top_k=TOP_K)
    _steps_run(ctx, generate, L, V)
    _defaults_run(ctx, generate)
    return (f"prompt kept; context cropped to the last max_seq_len={L} tokens; next token from the last position; "
            f"eval mode, no autograd, mode restored; top_k=1 = greedy = reference; reproducible with a generator; "
            f"sample frequencies of {3 * N_PER_PROMPT} rows fit softmax(logits / T) at T=0.6 and with top_k={TOP_K} "
            f"at T=1.5; every step of a 3-token run fits softmax(logits / 0.6); called without temperature and top_k "
            f"(vocabulary {DEFAULTS_V}) the samples fit softmax(logits): the defaults are 1.0 and None")
