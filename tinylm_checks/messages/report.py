"""Stage 12: FLOPs per token."""

MISTAKES = {
    "flops_forward_only": (
        "the count is the forward pass only (factor 2): training also runs the backward pass, which costs about "
        "twice the forward",
        "training FLOPs = 3 x forward = 6 N + 6 L T D (Kaplan et al. 2020): a factor 6, not 2"),
    "flops_no_attention_term": (
        "the attention scores' term 6 L T D is missing: 6 N counts only the matrices with parameters, and Q K^T "
        "has none",
        "add 6 * num_layers * seq_len * d_model: each of the T queries meets T keys of width D in every layer"),
    "flops_position_embedding_counted": (
        "the position embedding is counted in N: it is a table lookup, no token is multiplied by it",
        "N = TinyLM(**config).get_num_params() (its default non_embedding=True leaves out pos_emb), or subtract "
        "max_seq_len * d_model"),
    "flops_lm_head_left_out": (
        "the token embedding is left out of N: tied, it is also lm_head, a D x V matrix every token is "
        "multiplied by",
        "keep token_emb in N (get_num_params() does): the output layer costs 6 V D per token"),
    "flops_max_seq_len_not_seq_len": (
        "the attention term uses max_seq_len instead of the seq_len argument",
        "6 * num_layers * seq_len * d_model: the sequences actually trained on may be shorter than max_seq_len"),
    "flops_attention_not_per_layer": (
        "the attention term is counted once, not once per layer",
        "every block attends: 6 * num_layers * seq_len * d_model"),
    "flops_attention_12": (
        "the attention term is 12 L T D (PaLM's and nanoGPT's count of both Q K^T and A V); this exercise asks "
        "for Kaplan et al.'s 6 L T D",
        "use 6 * num_layers * seq_len * d_model, as the exercise states (the two conventions differ only in the "
        "attention term)"),
    "flops_untied_lm_head_ignored": (
        "with tie_weights=False the output layer lm_head has a V x D matrix of its own, and the count leaves it "
        "out (tie_weights was dropped from the config, or the tied count assumed)",
        "build the model from the whole config, TinyLM(**config), so that tie_weights reaches it: "
        "get_num_params() then counts lm_head's own matrix"),
    "flops_not_a_number": (
        "the result is not a number (an int or a float)",
        "return a plain Python number, e.g. int(...) or float(...), not a tensor, a string or a tuple"),
}

MESSAGES = {
    "flops_per_token.none": {
        "problem": "the result is not a number",
    },
    "flops_per_token.not_a_number": {
        "problem": "the result is not a number",
        "expected": "an int (or a float)",
    },
    "flops_per_token.passed": "6 N + 6 L T D on 3 configurations (tied and untied output layer, seq_len < max_seq_len)",
    "flops_per_token.wrong": {
        "problem": "the number of FLOPs per token is wrong",
        "expected": "{flops:,} = 6 N + 6 L T D with N = {N:,} (no position embedding), L T D = {LTD:,}",
        "hint": "compute the two terms separately and print them: 6 * N with N = TinyLM(**config).get_num_params(), "
                "then 6 * num_layers * seq_len * d_model",
    },
}

PLACES = {
    # mistake id -> where to look for it in the learner's code: shown with the mistake, before its fix
    "flops_forward_only":
        "the factors in your formula: which passes of a training step do they cover?",
    "flops_no_attention_term":
        "the terms of your return line: which one counts the attention scores?",
    "flops_position_embedding_counted":
        "how you get N: which parameters it includes",
    "flops_lm_head_left_out":
        "how you get N: what you subtract from it or leave out",
    "flops_max_seq_len_not_seq_len":
        "the length in your attention term: where it comes from",
    "flops_attention_not_per_layer":
        "the factors of your attention term: what it is multiplied by",
    "flops_attention_12":
        "the coefficient of your attention term",
    "flops_untied_lm_head_ignored":
        "how you build the model whose parameters you count: which config keys reach it?",
    "flops_not_a_number":
        "your return line: the type of what it returns",
}
