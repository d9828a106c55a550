"""The course's exercises, in one place: the only hand-written list of them outside the notebooks.

Each :class:`Exercise` says which stage it belongs to, the name the learner defines (the reference's name too),
the reference module that holds its answer, its check, its points and how its hidden check is written; each
:class:`Stage` says which reference modules hold its answers and which ones its notebook imports as given code.
Everything else that lists exercises is derived from here: the hiding policy of autograding
(:func:`hidden_modules`), the build's lint and the notebooks' grading metadata (``tools/build_notebooks.py``), the
verdicts the grader computes (:mod:`tinylm_grading.preprocessors`), the README's exercise table
(:func:`exercise_table`) and the tests' tables.

Adding an exercise is then: an entry here, the reference, the check, its mutants (``tests/mutants/``) and the
notebook cells (``course/``).
"""
from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass

FRESH = 'runpy.run_module("tinylm_checks.grading")["fresh"]()'
"""How a hidden check reaches the checks: a fresh copy of them, loaded past anything the notebook patched."""


@dataclass(frozen=True)
class Stage:
    """One stage: one notebook, one nbgrader assignment."""

    name: str  # the assignment and notebook name, e.g. "01_attention"
    title: str  # as the README's table shows it
    answers: tuple[str, ...] = ()  # tinylm_solutions modules holding this stage's answers
    imports: tuple[str, ...] = ()  # tinylm_solutions modules the notebook imports (given code of earlier stages)
    own_code: bool = False  # the learner rewrites earlier stages' answers here: all of them are hidden
    grading_time: int = 1  # how many GradingExecute.notebook_timeout grading its notebook may take (see STAGES)


@dataclass(frozen=True)
class Exercise:
    """One exercise: a solution cell and, when it is graded by a check, the test cell after it."""

    id: str  # the solution cell's grade id; its check cell's is f"{id}_check"
    stage: str
    name: str = ""  # what the learner defines, as the reference names it ("" for a written answer)
    module: str = ""  # the tinylm_solutions module that holds the reference
    check: str = ""  # the tinylm_checks function that checks it (a written answer's, if any, only gives feedback)
    points: int = 0  # 0: a bonus exercise (checked, not graded)
    summary: str = ""  # the README's words for it (markdown)
    written: bool = False  # a written answer, graded by hand: an answer cell, markdown or a %%writefile code cell
    uses: tuple[str, ...] = ()  # exercises of its own notebook it is built on (a mistake there costs this one too)
    hidden_seed: int = 1  # the hidden check: the check again, from a fresh copy of the checks, with this seed

    @property
    def bonus(self) -> bool:
        return not self.written and self.points == 0

    @property
    def test_id(self) -> str:
        """The grade id of the cell that grades it: the check cell, or the written answer's own cell."""
        return self.id if self.written else f"{self.id}_check"

    @property
    def visible_check(self) -> str:
        """The check call a learner sees and runs: ``check_x(name)``."""
        return f"{self.check}({self.name})"

    @property
    def hidden_check(self) -> str:
        """The hidden check line, exactly as the build writes it and the grader reads it (:func:`hidden_calls`)."""
        return f"{FRESH}.{self.check}({self.name}, seed={self.hidden_seed})"

    def reference(self):
        """The reference object (imports ``tinylm_solutions.<module>``)."""
        return getattr(importlib.import_module(f"tinylm_solutions.{self.module}"), self.name)


STAGES = (
    Stage("00_setup", "setup", answers=("softmax",)),
    Stage("01_attention", "attention", answers=("attention",)),
    Stage("02_multihead", "multi-head", answers=("multihead",), imports=("attention",)),
    Stage("03_masks", "masks", answers=("masks",), imports=("attention", "multihead")),
    Stage("04_positions", "positions", answers=("position",), imports=("multihead",)),
    Stage("05_ffn", "FFN", answers=("ffn",)),
    Stage("06_norm", "norm", answers=("norm",), imports=("ffn",)),
    Stage("07_block", "block", answers=("block", "causal_attention"), imports=("attention", "ffn", "multihead", "norm")),
    Stage("08_lm", "language model", answers=("model",), imports=("attention", "block", "data", "norm")),
    Stage("09_training", "training", answers=("tokenizer", "train", "checklist"), imports=("data", "model", "segment")),
    Stage("10_generation", "generation", answers=("generate",), imports=("data", "model", "tokenizer", "trainer")),
    Stage("11_ablations", "ablations", answers=("debugging",),
          imports=("ablations", "claims", "data", "generate", "model", "report", "tokenizer", "trainer")),
    Stage("12_report", "report", answers=("flops",), imports=("model", "report")),
    Stage("13_capstone", "capstone", answers=("capstone",), imports=("data",), own_code=True, grading_time=3),
)
"""The stages, in order. The capstone's notebook may take three times ``notebook_timeout`` when graded: its checks
run the learner's commands (40 at the grader's two seeds, each a new sandboxed Python that imports PyTorch), which a
busy machine slows with everything else. On a 2-core machine at a load of about 3 from others' work, grading a
correct capstone took 73 s, and 169 and 175 s beside 8 and 14 more busy processes (the notebook's 300 s would have
held, but a review saw a correct capstone graded 15/16 on a busier machine). The other stages' notebooks take 14 to
23 s."""


def notebook_seconds(stage: str | None, seconds: float) -> float:
    """The seconds grading a notebook of ``stage`` may take in all, when ``seconds`` is ``notebook_timeout`` (a name
    that is no stage: ``seconds``)."""
    return seconds * (STAGE[stage].grading_time if stage in STAGE else 1)

NOT_IMPORTED = ("cli", "course")
"""tinylm_solutions modules no notebook imports (hidden while any stage is graded): the command lines."""
SUPPORT = ("i18n", "messages")
"""tinylm_solutions modules that are no stage's answer and that the checks need in every stage (the learner's
language, and the words of the command lines and of the report that notebook 12 writes): never hidden."""

E = Exercise
EXERCISES = (
    E("softmax", "00_setup", "softmax", "softmax", "check_softmax", 1,
      "`softmax(x)` over the last dim, numerically stable (a warm-up that shows how checks work)"),
    E("attention_scores", "01_attention", "attention_scores", "attention", "check_attention_scores", 1,
      "`attention_scores(q, k)`"),
    E("scaled_dot_product_attention", "01_attention", "scaled_dot_product_attention", "attention",
      "check_scaled_dot_product_attention", 2, "`scaled_dot_product_attention(q, k, v, mask=None) -> (out, weights)`"),
    E("self_attention", "01_attention", "SelfAttention", "attention", "check_self_attention", 3,
      "`SelfAttention(d_model)` with `W_Q, W_K, W_V`"),
    E("causal_mask", "01_attention", "causal_mask", "attention", "check_causal_mask", 1,
      "`causal_mask(T)` (taught here, with the heatmap; stage 03 builds on it)"),
    E("split_heads", "02_multihead", "split_heads", "multihead", "check_split_heads", 1,
      "`split_heads(x, num_heads)`"),
    E("merge_heads", "02_multihead", "merge_heads", "multihead", "check_merge_heads", 1, "`merge_heads(x)`"),
    E("multi_head_attention", "02_multihead", "MultiHeadSelfAttention", "multihead", "check_multi_head_attention", 3,
      "`MultiHeadSelfAttention(d_model, num_heads)` with `W_Q, W_K, W_V, W_O`"),
    E("key_padding_mask", "03_masks", "key_padding_mask", "masks", "check_key_padding_mask", 2,
      '`key_padding_mask(lengths, T, padding_side="right") -> (B, 1, 1, T)`'),
    E("combine_masks", "03_masks", "combine_masks", "masks", "check_combine_masks", 1,
      "`combine_masks(*masks)`: the AND, `None` skipped"),
    E("masked_softmax", "03_masks", "masked_softmax", "masks", "check_masked_softmax", 2,
      "`masked_softmax(scores, mask=None)`: masked keys exactly 0, no `NaN`"),
    E("sinusoidal_position_encoding", "04_positions", "sinusoidal_position_encoding", "position",
      "check_sinusoidal_position_encoding", 3, "`sinusoidal_position_encoding(max_len, d_model)` (interleaved sin/cos)"),
    E("positional_encoding", "04_positions", "PositionalEncoding", "position", "check_positional_encoding", 2,
      "`PositionalEncoding(d_model, max_len)` with the buffer `pe (1, max_len, D)`",
      uses=("sinusoidal_position_encoding",)),
    E("learned_positional_embedding", "04_positions", "LearnedPositionalEmbedding", "position",
      "check_learned_positional_embedding", 1, "`LearnedPositionalEmbedding(d_model, max_len)` with "
      "`emb = nn.Embedding(max_len, D)`"),
    E("apply_rope", "04_positions", "apply_rope", "position", "check_apply_rope", 0,
      "`apply_rope(x, positions=None)` (RoPE)"),
    E("feed_forward", "05_ffn", "FeedForward", "ffn", "check_feed_forward", 3,
      "`FeedForward(d_model, d_ff)` with `linear1, linear2` and GELU"),
    E("swiglu", "05_ffn", "SwiGLU", "ffn", "check_swiglu", 0, "`SwiGLU(d_model, d_ff)` with `gate_proj, up_proj, "
      "down_proj`"),
    E("layer_norm", "06_norm", "LayerNorm", "norm", "check_layer_norm", 3, "`LayerNorm(d_model, eps=1e-5)` with "
      "`weight, bias`"),
    E("transformer_block", "07_block", "TransformerBlock", "block", "check_transformer_block", 4,
      "`TransformerBlock(d_model, num_heads, d_ff, norm_first=True)` with `norm1, attn, norm2, ffn`"),
    E("block_parameter_counts", "07_block", "block_parameter_counts", "block", "check_block_parameter_counts", 2,
      '`block_parameter_counts(block) -> {"attn", "ffn", "norms", "total"}`'),
    E("causal_self_attention", "07_block", "CausalSelfAttention", "causal_attention", "check_causal_self_attention", 3,
      "`CausalSelfAttention(d_model, num_heads, dropout=0.0)`: fused `qkv`, one `F.scaled_dot_product_attention` "
      "call, dropout only in training"),
    E("causal_lm_loss", "08_lm", "causal_lm_loss", "model", "check_causal_lm_loss", 2,
      "`causal_lm_loss(logits, labels)`: shift by one, cross-entropy on raw logits, `ignore_index=-100`"),
    E("tiny_lm", "08_lm", "TinyLM", "model", "check_tiny_lm", 5,
      "`TinyLM(vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff)` with `token_emb, pos_emb, blocks, "
      "norm, lm_head` (tied), GPT-2 init; uses exercise 1's loss", uses=("causal_lm_loss",)),
    E("parameter_table", "08_lm", "parameter_table", "model", "check_parameter_table", 2,
      '`parameter_table(model) -> {"token_emb", "pos_emb", "blocks", "norm", "lm_head", "total"}`'),
    E("char_tokenizer", "09_training", "char_tokenizer", "tokenizer", "check_char_tokenizer", 2,
      "`char_tokenizer(text) -> (vocab, ids)`: sorted characters, the round trip"),
    E("word_encode", "09_training", "word_encode", "tokenizer", "check_word_tokenizer", 2,
      "`word_encode(text, vocab) -> ids`: `<pad>` 0, `<unk>` 1 for unknown words, `<eos>` 2 at the end"),
    E("train_step", "09_training", "train_step", "train", "check_train_step", 3,
      '`train_step(model, batch, optimizer, max_grad_norm=1.0) -> {"loss", "grad_norm"}`: zero_grad → backward → '
      "clip → step"),
    E("evaluate", "09_training", "evaluate", "train", "check_evaluate", 2,
      "`evaluate(model, batches) -> float`: eval mode, no_grad, mode restored, total loss / counted tokens"),
    E("perplexity", "09_training", "perplexity", "train", "check_perplexity", 1, "`perplexity(loss) = exp(loss)`"),
    E("overfit_checklist", "09_training", "overfit_checklist", "checklist", "check_overfit_checklist", 3,
      "`overfit_checklist(setup)`: the lesson's six checks in order, the first that fails named (`None` if none); "
      "the setup left as it was"),
    E("repair", "09_training", "repair", "checklist", "check_repair", 2,
      "`repair(setup, cause)`: the named cause fixed in place, nothing else changed"),
    E("generate", "10_generation", "generate", "generate", "check_generate", 4,
      "`generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None) -> (B, T + "
      "max_new_tokens)`"),
    E("nan_loss_bug", "11_ablations", "nan_loss_bug", "debugging", "check_nan_loss_bug", 1,
      "`nan_loss_bug()`: names the bug behind a NaN loss (one of `BUG_NAMES`)"),
    E("stable_cross_entropy", "11_ablations", "stable_cross_entropy", "debugging", "check_stable_cross_entropy", 2,
      "`stable_cross_entropy(logits, targets)`: finite for logits of any size (log-sum-exp)"),
    E("uniform_attention_bug", "11_ablations", "uniform_attention_bug", "debugging", "check_uniform_attention_bug", 1,
      "`uniform_attention_bug()`: names the bug behind uniform attention"),
    E("fixed_attention", "11_ablations", "fixed_attention", "debugging", "check_fixed_attention", 2,
      "`fixed_attention(q, k, v, mask=None) -> (out, weights)`: weights follow the keys"),
    E("future_mask_bug", "11_ablations", "future_mask_bug", "debugging", "check_future_mask_bug", 1,
      "`future_mask_bug()`: names the bug behind a suspiciously low loss"),
    E("fixed_causal_mask", "11_ablations", "fixed_causal_mask", "debugging", "check_fixed_causal_mask", 2,
      "`fixed_causal_mask(T)`: a TinyLM using it reads no future token"),
    E("unshifted_labels_bug", "11_ablations", "unshifted_labels_bug", "debugging", "check_unshifted_labels_bug", 1,
      "`unshifted_labels_bug()`: names the bug behind a loss that falls to ~0"),
    E("fixed_lm_loss", "11_ablations", "fixed_lm_loss", "debugging", "check_fixed_lm_loss", 2,
      "`fixed_lm_loss(logits, labels)`: next-token loss, labels shifted by one, `-100` ignored"),
    E("flops_per_token", "12_report", "flops_per_token", "flops", "check_flops_per_token", 2,
      "`flops_per_token(config, seq_len)`: training FLOPs per token, `6N + 6LTD` (Kaplan et al. 2020)"),
    E("overfit_answer", "12_report", points=2, written=True, summary="written answer: what the overfit run shows"),
    E("ablations_answer", "12_report", points=3, written=True, summary="written answer: what the ablations show"),
    E("bug_answer", "12_report", points=2, written=True, summary="written answer: the first bug met"),
    E("compute_answer", "12_report", points=2, written=True, summary="written answer: where the compute goes"),
    E("capstone_model", "13_capstone", "repo", "capstone", "check_capstone_model", 4,
      "`tiny-transformer/model.py`: your causal mask, attention and TinyLM in one file, equal to the reference with "
      "copied weights"),
    E("attention_tests", "13_capstone", "repo", "capstone", "check_attention_tests", 2,
      "`tests/test_attention.py`: passes on correct models written unlike the reference, fails on two broken "
      "attentions"),
    E("causal_mask_tests", "13_capstone", "repo", "capstone", "check_causal_mask_tests", 2,
      "`tests/test_causal_mask.py`: passes on correct models written unlike the reference, fails on two broken masks"),
    E("overfit_tests", "13_capstone", "repo", "capstone", "check_overfit_tests", 2,
      "`tests/test_overfit_batch.py`: passes on correct models written unlike the reference, fails on four that "
      "cannot overfit"),
    E("capstone_train", "13_capstone", "repo", "capstone", "check_capstone_train", 3,
      "`train.py --config configs/tiny.yaml`: trains, saves a checkpoint"),
    E("capstone_generate", "13_capstone", "repo", "capstone", "check_capstone_generate", 2,
      "`generate.py --checkpoint --prompt`: continues a prompt, greedy equal to the reference's"),
    E("capstone_report", "13_capstone", "repo", "capstone", "check_capstone_report", 1,
      "`report.md`: the lesson's five questions answered with the numbers of your runs, graded by hand (its check "
      "only says whether each question has an answer)", written=True),
)
del E

FEEDBACK_CHECKS = ("check_capstone_repository",)
"""Checks that no exercise is graded by: feedback on the whole capstone repository as a stranger runs it (issue 41);
its reference is the capstone's (``tinylm_solutions.capstone.repo``), its mutants are in tests/mutants/capstone.py."""

BY_ID = {e.id: e for e in EXERCISES}
BY_TEST_ID = {e.test_id: e for e in EXERCISES if not e.bonus}
STAGE = {s.name: s for s in STAGES}


def stage_exercises(stage: str) -> tuple[Exercise, ...]:
    return tuple(e for e in EXERCISES if e.stage == stage)


def graded(stage: str | None = None) -> tuple[Exercise, ...]:
    """The exercises that earn points (all stages, or one)."""
    return tuple(e for e in EXERCISES if e.points and (stage is None or e.stage == stage))


def checked(stage: str | None = None) -> tuple[Exercise, ...]:
    """The exercises a check verifies, bonus ones and a written answer's feedback included (all stages, or one)."""
    return tuple(e for e in EXERCISES if e.check and (stage is None or e.stage == stage))


def first_importer(module: str) -> str | None:
    """The first stage whose notebook imports ``module`` (None: no notebook does)."""
    return next((s.name for s in STAGES if module in s.imports), None)


def hidden_modules(stage: str) -> tuple[str, ...]:
    """The tinylm_solutions modules hidden from the learner's kernel while ``stage`` is autograded (``()`` for a name
    that is no stage): its own answers, and every module a later stage brings, answers or given code, because
    later code repeats earlier answers (stage 11's fixed loss is stage 08's loss); for a stage where the learner
    writes their own code again (``own_code``: the capstone), every stage's answers. What stays is what the stage's
    notebook may import: the earlier stages' answers and the given code it uses."""
    if stage not in STAGE:
        return ()
    later_answers = [m for s in STAGES if s.name >= stage or STAGE[stage].own_code for m in s.answers]
    answers = {m for s in STAGES for m in s.answers}
    given = sorted({m for s in STAGES for m in s.imports} - answers) + list(NOT_IMPORTED)
    return (*later_answers, *(m for m in given if (first_importer(m) or "~") > stage))


def hidden_calls(source: str) -> list[tuple[str, str, int | None]]:
    """Every hidden check call in a cell's source: ``(check, learner name, seed)`` for each call
    ``<FRESH>.check_x(name, seed=N)``, read with ``ast`` (so spacing and line breaks do not matter); a call whose
    name or seed is not a plain name and a whole number gives ``None`` for them. A source that does not parse but
    mentions the fresh checks gives ``[("", "", None)]``: a hidden check nobody can read. The build accepts a test
    cell only when this finds exactly its exercise's call; the grader computes every verdict it finds."""
    if "tinylm_checks.grading" not in source:
        return []
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return [("", "", None)]
    fresh = ast.dump(ast.parse(FRESH, mode="eval").body)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and ast.dump(node.func.value) == fresh:
            name = node.args[0].id if len(node.args) == 1 and isinstance(node.args[0], ast.Name) else None
            seeds = [k.value for k in node.keywords if k.arg == "seed"]
            seed = seeds[0].value if len(seeds) == 1 and isinstance(seeds[0], ast.Constant) \
                and type(seeds[0].value) is int else None
            found.append((node.func.attr, name, seed))
    if not found:
        return [("", "", None)]
    return found


def exercise_table() -> str:
    """The README's table of exercises (markdown), one row per exercise; a stage's written answers without a check
    share a row."""
    rows = ["| stage | exercise (reference name) | check | points |", "|---|---|---|---|"]
    for stage in STAGES:
        label = f"{stage.name[:2]} {stage.title}"
        exercises = stage_exercises(stage.name)
        for e in (e for e in exercises if e.check):
            points = "bonus" if e.bonus else str(e.points)
            check = f"`{e.check}` (feedback, no points)" if e.written else f"`{e.check}`"
            rows.append(f"| {label} | {e.summary} | {check} | {points} |")
            label = ""
        written = [e for e in exercises if e.written and not e.check]
        if written:
            words = ", ".join(e.summary.removeprefix("written answer: ") for e in written)
            rows.append(f"| {label} | {len(written)} written answers ({words}), graded by hand | — | "
                        f"{' + '.join(str(e.points) for e in written)} |")
    return "\n".join(rows) + "\n"
