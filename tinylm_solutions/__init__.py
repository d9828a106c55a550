"""The TinyLM course's reference implementation: one module per component.

attention (scores, scaled dot-product attention, SelfAttention, the causal mask), multihead (split/merge
heads, multi-head self-attention), masks (key padding, combining masks, masked softmax), position (sinusoidal, learned, RoPE), ffn (FeedForward, SwiGLU),
norm (LayerNorm), block (TransformerBlock, Pre-LN and Post-LN), model (TinyLM), tokenizer (char,
word), data (default corpus, batches), train (train_step, evaluate, perplexity), trainer (the training loop), cli
(tinylm-train, tinylm-generate), generate (temperature, top-k), ablations (stage 11's ablated models and lab model, given code),
debugging (stage 11's answers: the debugging lab's fixes),
flops (FLOPs per token, stage 12), report (stage 12's report.md). The checks in ``tinylm_checks`` compare learners' code with it.
"""

#: The module that holds each stage's exercise answers, by assignment name. Autograding a stage hides its
#: module from the learner's kernel (tinylm_grading.sandbox); a module is never shared by two stages, so
#: the given code a notebook imports from earlier stages stays importable.
STAGE_MODULES = {
    "01_attention": ("attention",),
    "02_multihead": ("multihead",),
    "03_masks": ("masks",),
    "04_positions": ("position",),
    "05_ffn": ("ffn",),
    "06_norm": ("norm",),
    "07_block": ("block",),
    "08_lm": ("model",),
    "09_training": ("tokenizer", "train"),
    "10_generation": ("generate",),
    "11_ablations": ("debugging",),
    "12_report": ("flops",),
}

#: The modules that hold no exercise's answer, by the first stage whose notebook imports them (None: no
#: notebook does). They still repeat answers of the stages before: ``ablations`` has TinyLM's forward (08),
#: ``trainer`` calls ``train_step`` (09).
GIVEN_FROM = {"data": "08_lm", "trainer": "10_generation", "ablations": "11_ablations", "report": "12_report",
              "cli": None}


def hidden_modules(stage: str) -> tuple[str, ...]:
    """The modules hidden from the learner's kernel while ``stage`` is autograded (``()`` for a name that is
    no stage): the stage's own answers, and every module that a later stage brings, answers or given code,
    because later code repeats earlier answers (stage 11's fixed loss is stage 08's loss). What stays is
    what the stage's notebook may import: the earlier stages' modules and the given code it uses."""
    if stage not in STAGE_MODULES:
        return ()
    later = [m for s, ms in STAGE_MODULES.items() if s >= stage for m in ms]
    return (*later, *(m for m, first in GIVEN_FROM.items() if first is None or first > stage))
