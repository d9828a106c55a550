"""Every sentence the command lines (``tinylm-train``, ``tinylm-generate``, ``tinylm-course``) print, by a stable id,
and the first cell of the learner notebooks.

``TEXT``: message id -> English ``str.format`` template with named fields. The Chinese is in
``locale/zh_CN/LC_MESSAGES/tinylm.po`` (``tools/messages.py`` keeps it in step); :func:`say` gives a message in
the user's language (:func:`tinylm_solutions.i18n.language`).
"""
from __future__ import annotations

import argparse
from contextlib import contextmanager
from pathlib import Path

from . import i18n

FOLDER = Path(__file__).resolve().parent

TEXT: dict[str, str] = {
    # ---- tinylm-train's help
    "train.description": "Train a TinyLM (a small decoder-only Transformer) on a text corpus, then print its "
                         "validation loss and a sample.",
    "train.epilog": "Settings come from the package's configs/tinylm.yaml, then from the --config file, then from the "
                    "options above. Bad input gives one line on stderr and exit status 2.",
    "train.help.config": "a YAML file of settings (keys as in configs/tinylm.yaml)",
    "train.help.corpus": "what to train on: en (the default: the docstrings of Python's standard library, English), "
                         "zh (10,622 Tang poems, Chinese) or the path of a UTF-8 text file",
    "train.help.checkpoint": "write the run's state to this file at every evaluation",
    "train.help.resume": "continue the run saved in --checkpoint",
    "train.help.no_progress": "do not show the progress bar",
    "train.help.setting": "default {default}",
    "train.help.block_size": "context length in tokens (the model's max_seq_len; default {default})",
    "train.help.d_model": "width of the model: features per token (default {default})",
    "train.help.num_heads": "attention heads per layer; d_model must be divisible by it (default {default})",
    "train.help.num_layers": "number of Transformer blocks (default {default})",
    "train.help.d_ff": "hidden width of the feed-forward network (default {default}: 4 * d_model)",
    "train.help.dropout": "dropout probability, in [0, 1) (default {default})",
    "train.help.init_std": "std of the initial weights (default {default}: sqrt(2 / (5 * d_model)))",
    "train.help.tokenizer": "char: one token per character; word: words and punctuation marks (Chinese cut into "
                            "words by jieba), a word seen only once becomes <unk> (default {default})",
    "train.help.max_chars": "keep only the first this many characters of the corpus (default {default}: all)",
    "train.help.steps": "training steps (default {default})",
    "train.help.batch_size": "sequences per step (default {default})",
    "train.help.lr": "learning rate, the peak one with a schedule (default {default})",
    "train.help.max_grad_norm": "clip the gradient norm to this value (default {default})",
    "train.help.warmup_steps": "linear warmup of the learning rate over this many steps (default {default})",
    "train.help.min_lr": "cosine decay of the learning rate down to this value (default {default}: no decay)",
    "train.help.lr_decay_steps": "the step where the decay reaches min_lr (default {default}: the last step)",
    "train.help.beta1": "AdamW's beta1 (default {default})",
    "train.help.beta2": "AdamW's beta2 (default {default})",
    "train.help.weight_decay": "AdamW's weight decay (default {default})",
    "train.help.decay_2d_only": "decay only the 2-D weights, not biases and LayerNorm gains: true or false "
                                "(default {default})",
    "train.help.fused_adamw": "use PyTorch's fused AdamW kernel: true or false (default {default})",
    "train.help.fast_attention": "train with PyTorch's fused attention: true or false (default {default})",
    "train.help.eval_interval": "evaluate on the validation data, and write the checkpoint, every this many steps "
                                "(default {default})",
    "train.help.seed": "random seed of the initial weights and of the batches (default {default})",
    "train.help.sample_tokens": "length of the sample printed at the end, in tokens (default {default})",
    "train.help.temperature": "temperature of the sample: lower is more predictable (default {default})",
    "train.help.top_k": "sample only from the k most likely tokens (default {default}: all)",
    # ---- what tinylm-train prints
    "train.corpus_line": "corpus: {chars:,} chars -> {tokens:,} tokens, vocab {vocab}; model: {params:,} parameters",
    "train.resuming": "; resuming at step {step}",
    "train.processes": "; {world} processes",
    "train.progress": "train",
    "train.progress_unit": "step",
    "train.progress_numbers": "loss {loss:.3f}, grad norm {grad_norm:.2f}, {tokens_per_s:,.0f} tokens/s",
    "train.eval_line": "step {step}: train loss {loss:.4f}, val loss {val_loss:.4f}, val perplexity {perplexity:.2f}",
    "train.sample": "sample:",
    # ---- tinylm-generate's help
    "generate.description": "Continue a prompt with a model trained by tinylm-train.",
    "generate.help.checkpoint": "a checkpoint written by tinylm-train --checkpoint",
    "generate.help.prompt": "the text to continue (its characters, or words, must be in the model's vocabulary)",
    "generate.help.tokens": "how many tokens to add (default {default})",
    "generate.help.temperature": "temperature: lower is more predictable, must be > 0 (default {default})",
    "generate.help.top_k": "sample only from the k most likely tokens (default: all)",
    "generate.help.seed": "random seed of the sampling (default {default})",
    # ---- bad input: the line after "tinylm-train: error: "
    "error.see_help": "{message} (see {prog} --help)",
    "error.not_int": "expected an integer, not {value}",
    "error.not_number": "expected a number, not {value}",
    "error.not_flag": "expected true or false, not {value}",
    "error.config_missing": "config {path}: no such file",
    "error.config_unreadable": "config {path} cannot be read: {reason}",
    "error.config_not_utf8": "config {path} is not UTF-8 text (byte 0x{byte} at offset {offset})",
    "error.config_not_yaml": "config {path} is not a YAML file: line {line}, column {column}: {problem}",
    "error.config_not_mapping": "config {path} must be a mapping of settings (key: value)",
    "error.config_unknown_key": "config {path}: unknown key {key} (known: {known})",
    "error.in_config": "config {path}: {problem}",
    "error.wrong_type": "{key} must be {kind}, not {value}",
    "error.null": "{key} must be set: it cannot be null ({kind})",
    "error.tokenizer": "tokenizer must be char or word, not {value}",
    "error.int_at_least": "{key} must be an integer >= {minimum}, got {value}",
    "error.positive_number": "{key} must be a positive number, got {value}",
    "error.non_negative": "{key} must be a number >= 0, got {value}",
    "error.fraction": "{key} must be in [0, 1), got {value}",
    "error.seed": "seed must be an integer from 0 to 2**63 - 1, got {value}",
    "error.heads": "d_model {d_model} must be divisible by num_heads {num_heads} (every head gets d_model / num_heads "
                   "features)",
    "error.schedule": "a cosine decay to min_lr needs decay_steps > warmup_steps={warmup_steps}, got {decay_steps} "
                      "(lr_decay_steps, or steps when it is null)",
    "error.model": "these settings give no model: {problem}",
    "error.world": "batch_size {batch_size} must be a multiple of the {world} processes",
    "error.resume_needs_checkpoint": "--resume needs --checkpoint PATH (the run to continue)",
    "error.corpus_missing": "corpus {path}: no such file (or give --corpus en or --corpus zh, the embedded corpora)",
    "error.corpus_is_dir": "corpus {path} is a folder: give a text file",
    "error.corpus_unreadable": "corpus {path} cannot be read: {reason}",
    "error.corpus_not_utf8": "corpus {path} is not UTF-8 text (byte 0x{byte} at offset {offset}): save it as UTF-8",
    "error.corpus_empty": "corpus {path} is empty",
    "error.zh_corpus_missing": "the Chinese corpus {path} is not there: it comes with the course's repository "
                               "(tools/make_zh_corpus.py rebuilds it)",
    "error.no_docstrings": "the English corpus is Python's docstrings and this Python has none (started with -OO?): "
                           "give --corpus zh or a text file",
    "error.too_short_chars": "the corpus has {have:,} characters: too short for block_size {block_size}. It needs at "
                             "least {need:,} characters (a tenth is held out for validation, and every example takes "
                             "block_size + 1 = {window} of them): give a longer text or a smaller --block-size",
    "error.too_short_words": "the corpus has {have:,} tokens (words and punctuation marks): too short for block_size "
                             "{block_size}. It needs at least {need:,} tokens (a tenth is held out for validation, "
                             "and every example takes block_size + 1 = {window} of them): give a longer text or a "
                             "smaller --block-size",
    "error.cut_by_max_chars": " (--max-chars {max_chars} kept only its first {max_chars:,} characters)",
    "error.checkpoint_missing": "checkpoint {path}: no such file",
    "error.not_checkpoint": "{path} is not a tinylm checkpoint (torch.load cannot read it: {error})",
    "error.checkpoint_lacks": "{path} is not a tinylm checkpoint (it has no {keys})",
    "error.checkpoint_damaged": "checkpoint {path} is damaged: its {part} does not load ({error})",
    "error.checkpoint_is_dir": "checkpoint {path} is a folder: give a file name, e.g. {example}",
    "error.checkpoint_no_folder": "checkpoint {path}: the folder {folder} does not exist",
    "error.checkpoint_unwritable": "checkpoint {path} cannot be written: {reason}",
    "error.other_vocabulary": "checkpoint {path} was trained on another vocabulary ({saved:,} {saved_kind} tokens; "
                              "this corpus gives {now:,} {kind} tokens): give the corpus and --tokenizer of that run",
    "error.other_model": "checkpoint {path} is a model with {key} = {saved}, these settings give {now}",
    "error.past_steps": "checkpoint {path} is at step {step} already: give --steps {step} or more to continue it",
    "error.diverged": "training diverged: the loss is {loss} at step {step}; try a smaller --lr (it was {lr})",
    "error.prompt_unknown_chars": "the prompt has characters not in the vocabulary: {chars} (the model knows the "
                                  "{vocab:,} characters of its corpus)",
    "error.prompt_no_tokens": "the prompt gives no tokens: give at least one known word or character",
    # ---- tinylm-course: the learner's notebooks without make (tinylm_solutions.course)
    "course.description": "The TinyLM course's notebooks, to learn on your own: write them into a folder, and open "
                          "them in JupyterLab.",
    "course.epilog": "A stage whose folder is there already holds your work: it is kept, never written over. Bad "
                     "input gives one line on stderr and exit status 2.",
    "course.help.lab": "write the notebooks into DIR (the stages not there yet), then open JupyterLab on DIR",
    "course.help.release": "write the notebooks into DIR (the stages not there yet), and nothing else",
    "course.help.lab_dir": "the course's folder (default: {default}, in the current folder)",
    "course.help.release_dir": "the folder to write the notebooks into (made if missing)",
    "course.help.lang": "the notebooks' language, and JupyterLab's: en or zh (here the default is {default}, from "
                        "TINYLM_LANG or the locale)",
    "course.lab.epilog": "Options after -- go to JupyterLab itself, e.g. {example}. JupyterLab runs until you stop it "
                         "(Ctrl+C in this window, twice).",
    "course.wrote": "wrote the notebooks of {count} stages into {folder}",
    "course.kept": "kept {stages} in {folder}: those folders hold your work (delete one to start that stage afresh)",
    "course.kept_all": "kept all {count} stages in {folder}: their folders hold your work (delete one to start that "
                       "stage afresh)",
    "course.error.python": "the TinyLM course needs Python {needed} or newer, and this is Python {version} "
                           "({python}): install a newer Python (python.org) and run the course with it",
    "course.error.not_a_folder": "{folder} is a file: give a folder for the notebooks (a new one, or the course's)",
    "course.error.cannot_write": "cannot write the notebooks into {folder}: {reason}",
    "course.error.jupyter_args": "-- {args}: only tinylm-course lab takes options after --, for JupyterLab",
    "course.error.no_jupyterlab": "JupyterLab is not installed in this Python ({python}): install the course with its "
                                  "lab extra, as the README says (pip install ...[lab]), or open the notebooks that "
                                  "tinylm-course release writes in the Jupyter you have",
    # ---- argparse's own words (its gettext msgids, exactly: i18n.argparse_words shows them in the user's language)
    "argparse.usage": "usage: ",
    "argparse.positionals": "positional arguments",
    "argparse.options": "options",
    "argparse.help": "show this help message and exit",
    "argparse.error": "%(prog)s: error: %(message)s\n",
    "argparse.argument": "argument %(argument_name)s: %(message)s",
    "argparse.required": "the following arguments are required: %s",
    "argparse.one_of_required": "one of the arguments %s is required",
    "argparse.unrecognized": "unrecognized arguments: %s",
    "argparse.not_allowed_with": "not allowed with argument %s",
    "argparse.ignored_explicit": "ignored explicit argument %r",
    "argparse.expected_one": "expected one argument",
    "argparse.expected_at_most_one": "expected at most one argument",
    "argparse.expected_at_least_one": "expected at least one argument",
    "argparse.expected_n": "expected %s argument",
    "argparse.expected_n_plural": "expected %s arguments",
    "argparse.ambiguous": "ambiguous option: %(option)s could match %(matches)s",
    "argparse.invalid_value": "invalid %(type)s value: %(value)r",
    "argparse.invalid_choice": "invalid choice: %(value)r (choose from %(choices)s)",
    "argparse.unknown_parser": "unknown parser %(parser_name)r (choices: %(choices)s)",
    "argparse.cannot_open": "can't open '%(filename)s': %(error)s",
    "argparse.unexpected_option": "unexpected option string: %s",
    # ---- stage 11's ablation tables and figures, and stage 12's report.md (tinylm_solutions.report)
    "report.note.seeds": "{steps} steps; a loss cell is the mean (min to max) over seeds {seeds}.",
    "report.note.seed": "{steps} steps, seed {seeds}.",
    "report.note.held_out": " Predicting each character of these held-out windows by its training frequency gives "
                            "{loss:.3f}.",
    "report.spread": "{mean:.3f} ({low:.3f} to {high:.3f})",
    "report.range": "{low:.1f} to {high:.1f}",
    "report.col.run": "run",
    "report.col.final_loss": "final training loss",
    "report.col.grad_ratio": "gradient of the last block / block 0 (first 10 steps), min to max",
    "report.col.lr": "learning rate",
    "report.col.wiring_loss": "{wiring}: final training loss",
    "report.col.post_minus_pre": "Post-LN - Pre-LN, each seed",
    "report.col.model": "model",
    "report.col.in_order": "held-out loss, in order",
    "report.col.reversed": "reversed",
    "report.col.gap": "gap (reversed - in order)",
    "report.run.residual": "{layers} layers, residual",
    "report.run.no_residual": "{layers} layers, no residual",
    "report.run.warmup": "Post-LN, warm-up",
    "report.run.learned_positions": "learned positions",
    "report.run.no_positions": "no positions",
    "report.fig.block": "block (0 = closest to the input)",
    "report.fig.grad_norm": "gradient norm (first steps)",
    "report.fig.grad_title": "gradient reaching each block",
    "report.fig.final_loss": "final training loss",
    "report.fig.dots_title": "final loss, one dot per seed ({steps} steps)",
    "report.fig.unigram": "unigram loss",
    "report.fig.lr": "learning rate",
    "report.fig.sweep_title": "Pre-LN and Post-LN ({steps} steps, seeds {seeds})",
    "report.fig.in_order": "in order (A B C D)",
    "report.fig.reversed": "reversed (D C B A)",
    "report.fig.order_loss": "mean next-token loss (nats)",
    "report.fig.order_title": "order test ({n} seeds)",
    "report.fig.order_title_one": "order test (1 seed)",
    "report.fig.parameters": "parameters",
    "report.fig.parameters_title": "where the parameters are",
    "report.fig.step": "step",
    "report.fig.loss": "loss",
    "report.fig.value": "value",
    "report.fig.flops": "training FLOPs per token (6N + 6LTD)",
    "report.fig.tokens_per_s": "measured tokens/s",
    "report.fig.throughput_title": "compute against throughput",
    "report.title": "TinyLM: a report on my runs",
    "report.section.parameters": "Where the parameters are",
    "report.section.overfit": "Overfitting one batch",
    "report.section.training": "The training run",
    "report.section.ablations": "Ablations",
    "report.section.compute": "Compute and throughput",
    "report.section.bug": "The first bug I met",
    "report.section.sources": "Where the numbers come from",
    "report.col.part": "part",
    "report.col.parameters": "parameters",
    "report.col.share": "share %",
    "report.col.steps": "steps",
    "report.col.first_loss": "first loss",
    "report.col.last_loss": "final loss",
    "report.col.ln_v": "ln V (uniform guess)",
    "report.col.val_loss": "final val loss",
    "report.col.val_perplexity": "val perplexity",
    "report.col.tokens_per_s": "tokens/s",
    "report.col.flops_per_token": "FLOPs per token",
    "report.col.gflops": "GFLOP/s",
    "report.part.total": "total",
    "report.part.token_emb_tied": "token_emb = lm_head (tied)",
    "report.part.blocks": "blocks (attention and FFN matrices)",
    "report.part.norm": "final norm",
    "report.part.attention_scores": "attention scores (6LTD)",
    "report.ablation.no_residual": "No residual connections",
    "report.ablation.norm_placement": "Pre-LN and Post-LN",
    "report.ablation.no_positions": "No positions: the order test",
    "report.model": "Model: `TinyLM({config})`.",
    "report.curve.one_batch": "loss on the one batch",
    "report.curve.train_loss": "train loss",
    "report.fig.overfit_title": "overfitting one batch",
    "report.fig.training_title": "training loss",
    "report.samples": "Samples:",
    "report.unigram": "Unigram loss (each character by its frequency): {loss:.3f} nats.",
    "report.compute.by_part": "FLOPs per token at T = {seq_len} (6N + 6LTD, Kaplan et al. 2020), by part:",
    "report.compute.measured": "Measured in training: {tokens_per_s:,.0f} tokens/s, i.e. {gflops:.3g} GFLOP/s sustained.",
    "report.compute.measured_memory": "Measured in training: {tokens_per_s:,.0f} tokens/s, i.e. {gflops:.3g} GFLOP/s "
                                      "sustained; peak memory {mb:.0f} MB.",
    "report.compute.timed": "Timed here (batch {batch} x {seq_len} tokens, one thread):",
    "report.bug": "**{name}**\n\nEvidence: {evidence}",
    "report.bug.no_name": "(no name recorded)",
    "report.bug.missing": "Not recorded (notebook 11 saves it): see my written answer.",
    "report.source.recorded": "{name}: recorded {time}",
    "report.source.no_time": "(no time)",
    "report.source.no_record": "no record",
    "report.source.lacks": "record lacks {keys}",
    "report.source.not_recomputed": "{name}: {why}; not recomputed",
    "report.source.recomputed": "{name}: {why}; recomputed a small version ({what})",
    "report.source.overfit": "{steps} steps on one batch",
    "report.source.train": "{steps} steps, {params:,} parameters",
    "report.source.ablations": "notebook 11's ablations with one seed and a third of its steps: a first trend, not "
                               "its result",
    # ---- the first cell of every learner notebook (tools/build_notebooks.py writes it, in the notebook's language)
    "course.cell.what": "Where the course is not installed (Colab, Kaggle, a hub without it), this cell installs it; "
                        "where it is, it does nothing.",
    "course.cell.from": "where to install the course from: a git URL or the address of its wheel (your instructor or "
                        "the course's README gives it)",
    "course.cell.lang": "the checks speak this notebook's language",
    "course.cell.python": "the TinyLM course needs Python {needed} or newer, and this notebook runs Python {version}: "
                          "choose a newer runtime",
    "course.cell.no_source": "the course is not installed here, and COURSE above is empty: set it to the address your "
                             "instructor or the course's README gives, then run this cell again",
}


def say(key: str, /, **values) -> str:
    """Message ``key`` in the user's language with ``values`` filled in.

    Raises:
        KeyError: no message ``key`` (a bug of the command lines, never the user's).
    """
    return i18n.translate(FOLDER, key, TEXT[key]).format(**values)


@contextmanager
def argparse_words(lang: str | None = None):
    """Within the block, argparse's own words ("usage:", "options", "show this help message and exit", "the following
    arguments are required: ...") are in ``lang`` (default :func:`language`): a command line builds its parser and
    parses inside it. argparse asks gettext for them (its module's ``_`` and ``ngettext``); the block points those at
    the ``argparse.*`` messages of this module (keyed by argparse's English, its msgid) and puts
    them back after, so nothing outside the block (another library's parser) changes."""
    lang = lang or i18n.language()
    by_english = {english: key for key, english in TEXT.items() if key.startswith("argparse.")}

    def gettext(english: str) -> str:
        key = by_english.get(english)
        return i18n.translate(FOLDER, key, english, lang) if key else english

    def ngettext(singular: str, plural: str, n: int) -> str:
        return gettext(singular if n == 1 else plural)

    before = argparse.__dict__.get("_"), argparse.__dict__.get("ngettext")
    if lang != "en":
        argparse._, argparse.ngettext = gettext, ngettext
    try:
        yield
    finally:
        argparse._, argparse.ngettext = before


def _speaking(method):
    def wrapped(self, *args, **kwargs):
        with argparse_words():
            return method(self, *args, **kwargs)
    return wrapped


class ArgumentParser(argparse.ArgumentParser):
    """argparse in the user's language: its own words (:func:`argparse_words`) while it builds its groups, writes its
    help and usage, parses and reports an error (``prog: error: message``, :func:`error_line`)."""

    __init__ = _speaking(argparse.ArgumentParser.__init__)
    format_usage = _speaking(argparse.ArgumentParser.format_usage)

    @_speaking
    def format_help(self) -> str:
        text = super().format_help()  # a section's heading ends in argparse's ":", after Chinese a full-width one
        return text if i18n.language() == "en" else "\n".join(
            line[:-1] + "：" if line.endswith(":") and not line.startswith(" ") and i18n.CJK.search(line) else line
            for line in text.split("\n"))
    parse_args = _speaking(argparse.ArgumentParser.parse_args)
    parse_known_args = _speaking(argparse.ArgumentParser.parse_known_args)
    error = _speaking(argparse.ArgumentParser.error)


def error_line(prog: str, message: str) -> str:
    """``prog: error: message`` and a newline, in the user's language (argparse's own form of an error)."""
    return i18n.translate(FOLDER, "argparse.error", TEXT["argparse.error"]) % {"prog": prog, "message": message}
