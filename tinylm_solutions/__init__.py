"""The TinyLM course's reference implementation: one module per component.

attention (scores, scaled dot-product attention, SelfAttention, split/merge heads, multi-head),
masks (causal, key padding), position (sinusoidal, learned, RoPE), ffn (FeedForward, SwiGLU),
norm (LayerNorm), block (TransformerBlock, Pre-LN and Post-LN), model (TinyLM), tokenizer (char,
word), data (default corpus, batches), train (train_step, evaluate, perplexity, the tinylm-train
CLI), generate (temperature, top-k). The checks in ``tinylm_checks`` compare learners' code with it.
"""
