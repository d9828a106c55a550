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

import functools
import math

import torch

from ._core import CheckFailure, Ctx, check, fmt_shape, fmt_values, reference
from ._text import MISTAKE, say


ref = reference("generate")

__all__ = ["check_generate"]


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
                     + [f"{k}=" + (say("generate.a_generator") if k == "generator" else repr(v))
                        for k, v in kwargs.items()])
    tried = say("generate.tried", args=args, max_seq_len=model.max_seq_len, vocab_size=model.vocab_size, what=what,
                seed=ctx.seed)
    try:
        out = generate(model, idx.clone(), n, **kwargs)
    except Exception as e:  # noqa: BLE001 - learner code may raise anything
        msg = str(e)
        mistake = None  # when none is named, the entry's hint says how to find the cause
        if "exceeds max_seq_len" in msg:
            mistake = MISTAKE.context_not_cropped
        elif isinstance(e, TypeError) and "generator" in msg:
            mistake = MISTAKE.no_generator_argument
        elif isinstance(e, NotImplementedError) and not msg.strip():
            mistake = MISTAKE.not_implemented
        elif "probability tensor contains" in msg and (kwargs.get("top_k") or 0) > 1 and \
                _rows_alone_fine(generate, model, idx, n, kwargs):
            # torch.multinomial got a row of nan in the batch, yet every row alone samples within its top-k: the
            # threshold was taken across the batch and cut some row whole
            mistake = MISTAKE.top_k_across_batch
        ctx.fail("generate.raised", error=type(e).__name__, tried=tried,
                 got=f"{type(e).__name__}: {msg.splitlines()[0] if msg.strip() else ''}".rstrip(": "), mistake=mistake)
    B, T = idx.shape
    if not isinstance(out, torch.Tensor):
        ctx.fail("generate.not_a_tensor", tried=tried,
                 expected=say("generate.a_long_tensor", shape=fmt_shape((B, T + n))),
                 got=say("core.got_none") if out is None else type(out).__name__,
                 mistake=MISTAKE.missing_return if out is None else None)
    if tuple(out.shape) == (B, n) and n != T + n:
        ctx.fail("generate.only_new_tokens", tried=tried,
                 expected=say("generate.shape_with_prompt", shape=fmt_shape((B, T + n)), n_new=n),
                 got=fmt_shape(out.shape), mistake=MISTAKE.prompt_not_kept)
    if tuple(out.shape) != (B, T + n):
        ctx.fail("generate.wrong_shape", tried=tried,
                 expected=say("generate.shape_with_prompt", shape=fmt_shape((B, T + n)), n_new=n),
                 got=fmt_shape(out.shape))
    if out.dtype != torch.long:
        ctx.fail("generate.wrong_dtype", dtype=out.dtype, tried=tried, got=str(out.dtype))
    if not torch.equal(out[:, :T], idx):
        row = int((out[:, :T] != idx).any(-1).nonzero()[0])
        ctx.fail("generate.prompt_changed", row=row, prompt=idx[row].tolist(), tried=tried,
                 got=str(out[row, :T].tolist()), mistake=MISTAKE.prompt_not_kept)
    if bool(((out < 0) | (out >= model.vocab_size)).any()):
        ctx.fail("generate.ids_outside_vocabulary", last_id=model.vocab_size - 1, tried=tried,
                 got=f"{out.min().item()} .. {out.max().item()}")
    return out, tried


def _modes(ctx: Ctx, model, tried: str, was_training: bool, slip) -> None:
    """The model ran in eval mode, without autograd, and was left in the mode it was in: three independent slips,
    each given to ``slip`` (of :meth:`Ctx.slips`). A model never called fails at once."""
    if not model.calls:
        ctx.fail("generate.model_not_called", tried=tried)
    if any(c["training"] for c in model.calls):
        slip("generate.train_mode", tried=say("generate.tried.training_mode", tried=tried), mistake=MISTAKE.model_in_train_mode)
    if any(c["grad"] for c in model.calls):
        slip("generate.grad_on", tried=say("generate.tried.autograd_on", tried=tried), mistake=MISTAKE.gradients_recorded)
    if model.training != was_training:
        slip("generate.mode_changed", was_training=was_training,
                 tried=say("generate.tried.training_mode" if was_training else "generate.tried.eval_mode", tried=tried),
                 got=f"model.training == {model.training}", mistake=MISTAKE.mode_not_restored)


def _greedy_run(ctx: Ctx, generate, table) -> None:
    """Run 1: top_k=1 past max_seq_len: contexts, positions, prompt, modes, equal to the reference."""
    L, V = table.shape[0], table.shape[2]
    B, T, n = 3, 3, 2 * L
    model = _stub(table, training=True)
    idx = _prompt(ctx, B, T, V)
    gen = torch.Generator().manual_seed(1000 + ctx.seed)
    out, tried = _run(ctx, generate, model, idx, n, say("generate.greedy.what"), temperature=0.8, top_k=1,
                      generator=gen)
    with ctx.slips() as slip:  # the modes, the contexts fed and the tokens picked are independent of one another
        _modes(ctx, model, tried, True, slip)
        with slip.caught():
            _greedy_contexts(ctx, model, out, T, n, L, tried)
        with slip.caught():
            _greedy_tokens(ctx, model, out, table, T, tried)
    expected = ref.generate(_stub(table, training=False), idx, n, temperature=0)
    if not torch.equal(out, expected):  # cannot happen when the steps above pass; a guard for the reference
        ctx.fail("generate.greedy.differs", tried=tried, expected=str(expected[0].tolist()), got=str(out[0].tolist()))


def _greedy_contexts(ctx: Ctx, model, out, T: int, n: int, L: int, tried: str) -> None:
    """One call of the model per new token, each fed the last ``L`` tokens (the whole sequence while it is
    shorter); name what was fed instead."""
    B = out.size(0)
    calls = [c["ids"] for c in model.calls]
    if model.n_calls != n:
        ctx.fail("generate.greedy.call_count", calls=model.n_calls, n_new=n, tried=tried)
    for s, fed in enumerate(calls):
        seq = out[:, :T + s]  # (B, T + s): what was there before step s
        right = seq[:, -L:]
        if tuple(fed.shape) == tuple(right.shape) and torch.equal(fed, right):
            continue
        if tuple(fed.shape) == (B, min(L, T + s)) and torch.equal(fed, seq[:, :L]):
            mistake = MISTAKE.context_cropped_from_front
        elif T + s > 1 and tuple(fed.shape) == (B, 1) and torch.equal(fed, seq[:, -1:]):
            mistake = MISTAKE.only_last_token_fed
        elif T + s >= L and tuple(fed.shape) == (B, L - 1) and torch.equal(fed, seq[:, -(L - 1):]):
            mistake = MISTAKE.context_crop_off_by_one
        else:
            mistake = None  # the entry's hint says what to feed
        ctx.fail("generate.greedy.wrong_context", step=s, length=T + s, max_seq_len=L,
                 right_shape=fmt_shape(right.shape), right_row=right[0].tolist(),
                 fed_shape=fmt_shape(fed.shape), fed_row=fed[0].tolist(), tried=tried, mistake=mistake)


def _greedy_tokens(ctx: Ctx, model, out, table, T: int, tried: str) -> None:
    """With top_k=1 each new token is the argmax of the last position's logits for what the model was fed."""
    for s, fed in enumerate(c["ids"] for c in model.calls):
        Tc = fed.size(1)
        logits = table[torch.arange(Tc)[None, :], fed].double()  # (B, Tc, V)
        best = logits[:, -1].argmax(-1)  # (B,)
        got = out[:, T + s]
        if torch.equal(got, best):
            continue
        row = int((got != best).nonzero()[0])
        first = logits[:, 0].argmax(-1)
        ctx.fail("generate.greedy.not_argmax", step=s, row=row, best=int(best[row]), context=fed[row].tolist(),
                 token=int(got[row]), tried=tried, mistake=MISTAKE.sampled_from_first_position if torch.equal(got, first) else None)


def _generator_run(ctx: Ctx, generate, table) -> None:
    """Run 2: the same generator seed gives the same tokens; another seed, other tokens."""
    L, V = table.shape[0], table.shape[2]
    B, T, n = 4, 2, L + 1
    idx = _prompt(ctx, B, T, V)
    outs = []
    for seed in (7 + ctx.seed, 7 + ctx.seed, 8 + ctx.seed):
        model = _stub(table, training=False)
        out, tried = _run(ctx, generate, model, idx, n, say("generate.generator.what", generator_seed=seed),
                          temperature=1.0, top_k=None, generator=torch.Generator().manual_seed(seed))
        with ctx.slips() as slip:
            _modes(ctx, model, tried, False, slip)
        outs.append(out)
    tried = say("generate.generator.tried", shape=fmt_shape(idx.shape), n_new=n, seed_a=7 + ctx.seed,
                seed_b=7 + ctx.seed, seed_c=8 + ctx.seed, seed=ctx.seed)
    if not torch.equal(outs[0], outs[1]):
        ctx.fail("generate.generator.same_seed_differs", first=outs[0][0, T:].tolist(), second=outs[1][0, T:].tolist(),
                 tried=tried, mistake=MISTAKE.generator_ignored)
    if torch.equal(outs[0], outs[2]):
        greedy = ref.generate(_stub(table, training=False), idx, n, temperature=0)
        ctx.fail("generate.generator.seeds_agree", rows=B, n_new=n, tokens=outs[0][0, T:].tolist(), tried=tried,
                 mistake=MISTAKE.greedy_instead_of_sampling if torch.equal(outs[0], greedy) else MISTAKE.generator_ignored)


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
    out, tried = _run(ctx, generate, model, idx, 1, say("generate.sampling.what", prompts=G, copies=n), **kwargs)
    with ctx.slips() as slip:
        _modes(ctx, model, tried, False, slip)
    drawn = out[:, -1].view(G, n)  # (G, n)
    counts = torch.stack([torch.bincount(d, minlength=V) for d in drawn]).double()  # (G, V)
    expected = _top_k_probs(logits, top_k, temperature)  # (G, V)
    ok, (g, v), excess = _fits(counts, expected, n)
    if ok:
        return
    rule = say("generate.rule", z=Z, slack=SLACK, n=n)
    one_hot = torch.nn.functional.one_hot(logits.argmax(-1), V).double()  # (G, V)
    candidates = [(MISTAKE.top_k_keeps_one, one_hot)] if top_k is not None and top_k > 1 else []
    candidates += [(MISTAKE.greedy_instead_of_sampling, one_hot),
                  (MISTAKE.temperature_multiplied, _top_k_probs(logits * temperature * temperature, top_k, temperature)),
                  (MISTAKE.temperature_not_applied, _top_k_probs(logits, top_k, 1.0))]
    if top_k is not None:
        z = logits / temperature
        kth = torch.topk(z, top_k, dim=-1).values[:, [-1]]  # (G, 1)
        candidates += [(MISTAKE.top_k_ignored, _top_k_probs(logits, None, temperature)),
                       (MISTAKE.top_k_keeps_k_plus_1, _top_k_probs(logits, top_k + 1, temperature)),
                       (MISTAKE.top_k_keeps_k_minus_1, _top_k_probs(logits, top_k - 1, temperature)),
                       (MISTAKE.top_k_across_batch, _top_k_probs(logits, None, temperature, kth.min())),
                       (MISTAKE.top_k_across_batch, _top_k_probs(logits, None, temperature, kth.max())),
                       (MISTAKE.top_k_across_batch, _top_k_probs(logits, None, temperature, kth[-1]))]
        candidates.append((MISTAKE.top_k_filled_with_zero, torch.softmax((logits / temperature).masked_fill(
            logits / temperature < kth, 0.0), dim=-1)))
    candidates.append((MISTAKE.row_0_probabilities_for_every_row, expected[:1].expand_as(expected)))
    mistake = next((m for m, p in candidates if _fits(counts, p, n)[0]), None)
    # counted for the worst cell's prompt g; below, g moves to the prompt a top-k problem names
    kept = (expected[g] > 0).sum().item()
    got_kept = int((counts[g] > 0).sum())
    outside = top_k is not None and bool(((expected == 0) & (counts > 0)).any())
    never_drawn = top_k is not None and bool(((expected > 0) & (counts == 0)).any())
    if outside:
        g = int(((expected == 0) & (counts > 0)).any(-1).nonzero()[0])
    elif never_drawn:
        g = int(((expected > 0) & (counts == 0)).any(-1).nonzero()[0])
    fail = functools.partial(
        ctx.fail, tried=tried, mistake=mistake, hint=say("generate.sampling.hint"),
        expected=say("generate.sampling.expected", prompt=g, near=fmt_values(expected[g], V, 3), kept=kept, rule=rule),
        got=say("generate.sampling.got", drawn=fmt_values(counts[g] / n, V, 3), distinct=got_kept, token=v,
                off_by=_off_by(excess)))
    if outside:
        fail("generate.sampling.outside_top_k", prompt=g, top_k=top_k,
             tokens=((expected[g] == 0) & (counts[g] > 0)).nonzero()[:, 0].tolist())
    if never_drawn:
        fail("generate.sampling.top_k_not_drawn", prompt=g, top_k=top_k)
    fail("generate.sampling.misfit", over_top_k=say("generate.sampling.over_top_k") if top_k is not None else "")


def _position_table(ctx: Ctx, L: int, V: int, spread: float) -> torch.Tensor:
    """(L, V, V) logits that depend on the position only (the same row whatever token is fed there): each position's
    row a random permutation of evenly spaced values spread ... -spread plus a little jitter. The tokens drawn at
    each step then follow one known distribution, whatever was drawn before."""
    values = torch.linspace(spread, -spread, V, dtype=torch.float64)
    rows = torch.stack([values[torch.randperm(V, generator=ctx.gen)] for _ in range(L)])  # (L, V)
    rows = rows + (torch.rand(L, V, generator=ctx.gen, dtype=torch.float64) - 0.5) * 0.01
    return rows[:, None, :].expand(L, V, V).float().contiguous()


def _off_by(excess: float) -> str:
    """How far the worst token's count is off (``excess``: from :func:`_fits`, inf for a token of probability 0)."""
    if math.isinf(excess):
        return say("generate.off_by_zero_probability")
    return say("generate.off_by_deviations", deviations=excess + Z)


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
    out, tried = _run(ctx, generate, model, idx, steps, say("generate.steps.what", copies=n, steps=steps), **kwargs)
    with ctx.slips() as slip:
        _modes(ctx, model, tried, False, slip)
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
        mistake = MISTAKE.temperature_first_step_only
    ctx.fail("generate.steps.misfit", step=s, near=fmt_values(expected[s], V, 3),
             rule=say("generate.rule", z=Z, slack=SLACK, n=n), drawn=fmt_values(counts[s] / n, V, 3), token=v,
             off_by=_off_by(excess), tried=tried, mistake=mistake)


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
    tried = say("generate.defaults.tried", shape=fmt_shape(idx.shape), generator=say("generate.a_generator"),
                vocab_size=V, seed=ctx.seed)
    try:
        out = generate(model, idx.clone(), 1, generator=gen)
    except Exception as e:  # noqa: BLE001 - learner code may raise anything
        msg = str(e)
        ctx.fail("generate.defaults.raised", error=type(e).__name__, tried=tried,
                 got=f"{type(e).__name__}: {msg.splitlines()[0] if msg.strip() else ''}".rstrip(": "))
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != (n, 2):
        ctx.fail("generate.defaults.not_a_tensor", tried=tried,
                 expected=say("generate.a_long_tensor", shape=fmt_shape((n, 2))),
                 got=fmt_shape(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__)
    counts = torch.bincount(out[:, 1].long().clamp(0, V - 1), minlength=V).double()  # (V,)
    expected = torch.softmax(logits, dim=-1)
    if _fits(counts[None], expected[None], n)[0] and _binned(counts, expected, n, bins):
        return
    order = logits.argsort(descending=True)
    drawn = int((counts > 0).sum())
    kept = int((counts[order] > 0).nonzero().max()) + 1  # the rank of the least likely token drawn
    top_k_cut = kept < V and drawn == kept and n * float(expected[order[kept:]].sum()) > 30
    if top_k_cut:
        mistake = MISTAKE.wrong_default_top_k
    elif any(_binned(counts, torch.softmax(logits / t, -1), n, bins)
             for t in (0.5, 0.6, 0.7, 0.8, 0.9, 1.25, 1.5, 2.0)):
        mistake = MISTAKE.wrong_default_temperature
    else:
        mistake = None
    tail = V - kept if kept < V else 8
    fail = functools.partial(
        ctx.fail, tried=tried, mistake=mistake,
        expected=say("generate.defaults.expected", vocab_size=V, top_mass=float(expected[order[:8]].sum()), tail=tail,
                     tail_mass=float(expected[order[-tail:]].sum())),
        got=say("generate.defaults.got", distinct=drawn, top_mass=float(counts[order[:8]].sum()) / n, tail=tail,
                tail_mass=float(counts[order[-tail:]].sum()) / n))
    if top_k_cut:
        fail("generate.defaults.top_k_cut", kept=kept, vocab_size=V)
    fail("generate.defaults.misfit")


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
    return say("generate.passed", max_seq_len=L, rows=3 * N_PER_PROMPT, top_k=TOP_K, vocab_size=DEFAULTS_V)
