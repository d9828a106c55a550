"""The TinyLM course's reference implementation: one module per component.

softmax (stage 00's warm-up), attention (scores, scaled dot-product attention, SelfAttention, the causal mask), multihead (split/merge
heads, multi-head self-attention), masks (key padding, combining masks, masked softmax), position (sinusoidal, learned, RoPE), ffn (FeedForward, SwiGLU),
norm (LayerNorm), block (TransformerBlock, Pre-LN and Post-LN), causal_attention (CausalSelfAttention, the production
form: fused qkv, one fused attention call), model (TinyLM), tokenizer (char,
word), data (default corpus, batches), train (train_step, evaluate, perplexity), trainer (the training loop), cli
(tinylm-train, tinylm-generate), generate (temperature, top-k), ablations (stage 11's ablated models and lab model, given code),
debugging (stage 11's answers: the debugging lab's fixes),
flops (FLOPs per token, stage 12), report (stage 12's report.md). The checks in ``tinylm_checks`` compare learners' code with it.

Which module holds which stage's answers, and which a notebook imports as given code, is the course's registry's
business (``tinylm_grading.registry``); this package imports nothing of the course's other packages.
"""
