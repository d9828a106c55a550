"""Stage 04: the sinusoidal table, PositionalEncoding, learned positions, RoPE."""

MISTAKES = {
    "sin_cos_swapped": (
        "sin and cos are swapped: the even columns (0, 2, 4, ...) must hold the sines, the odd ones the cosines",
        "PE[:, 0::2] = torch.sin(angles) and PE[:, 1::2] = torch.cos(angles)"),
    "concatenated_layout": (
        "the table is laid out as [sin, ..., sin, cos, ..., cos] (all sines, then all cosines): a valid layout "
        "(tensor2tensor uses it), but not the interleaved one this course uses",
        "interleave: column 2i holds sin(angle_i) and column 2i+1 holds cos(angle_i): PE[:, 0::2] = "
        "torch.sin(angles), PE[:, 1::2] = torch.cos(angles)"),
    "exponent_i_over_d": (
        "the exponent is i/D instead of 2i/D for pair i (columns 2i and 2i+1), so the frequencies fall too slowly",
        "the 2i in 10000^(2i/D) is the column index of the sin: looping over pairs i = 0, 1, 2, ..., write 2 * "
        "i / d_model; looping over even columns c = 0, 2, 4, ..., write c / d_model"),
    "exponent_doubled": (
        "the exponent is doubled: 2c/D with c the even column index (c = 2i already), i.e. 4i/D for pair i, so "
        "the frequencies fall too fast",
        "torch.arange(0, d_model, 2) already gives 2i (0, 2, 4, ...): divide it by d_model without multiplying "
        "by 2 again"),
    "wrong_base": (
        "the frequencies fall geometrically, but with another base than 10000",
        "the frequency of pair i is 1 / 10000^(2i/D): check the constant 10000 (10_000, 1e4), and log(10000) if "
        "you use the exp/log form"),
    "exponent_denominator": (
        "the exponent 2i/D is divided by something other than the width D (d_model; d_k in RoPE): by max_len, "
        "by a number written in (like the paper's 512), or by a size read from another axis; the constant 10000 "
        "is right",
        "the exponent is 2i / d_model, with the d_model the function was given: 10000 ** (torch.arange(0, "
        "d_model, 2) / d_model), no max_len and no number written in its place"),
    "exponent_sign": (
        "the frequencies grow with i instead of falling: the position is multiplied by 10000^(2i/D) instead of "
        "divided (or the minus sign of exp(-2i ln(10000) / D) is missing)",
        "angle = pos / 10000^(2i/D) = pos * exp(-2i * math.log(10000) / D): the frequencies go from 1 down to "
        "1/10000"),
    "integer_division": (
        "an integer division (//, or int()) rounds the exponent 2i/D or the angle down to a whole number",
        "use / (true division) everywhere and keep positions and exponents float: with two_i = torch.arange(0, "
        "d_model, 2), the exponent is two_i / d_model, and the angle pos / 10000 ** (...)"),
    "cos_own_frequency": (
        "the sin and the cos of a pair use different frequencies (e.g. column 2i+1 with exponent (2i+1)/D): "
        "both must use the angle of pair i, pos / 10000^(2i/D)",
        "compute one angle per pair, angles = pos / 10000^(2i/D) of shape (max_len, D/2), then take sin and cos "
        "of that same tensor"),
    "positions_from_one": (
        "positions are counted from 1; the first token is at position 0",
        "positions are torch.arange(max_len) (or arange(T)): 0, 1, ..., not 1, 2, ..."),
    "wrong_frequencies": (
        "the frequencies are not 10000^(-2i/D) for pair i",
        "pair i (columns 2i, 2i+1) turns by 1 / 10000^(2i/D) radians per position: 1 for pair 0, then smaller "
        "and smaller"),
    "table_dtype": (
        "the table is not in torch's default float dtype (float32 unless you changed it)",
        "build it with torch.zeros(max_len, d_model) and float positions (torch.arange(max_len).float()); don't "
        "pass dtype= anywhere"),
    "table_transposed": (
        "the table has shape (d_model, max_len): it is transposed, or max_len and d_model are swapped somewhere",
        "one row per position, one column per feature: shape (max_len, d_model); the arguments come in the "
        "order (max_len, d_model)"),
    "positions_not_sliced": (
        "all max_len positions are added, not the first T: the positions are not cut to the sequence's length",
        "cut the positions to T = x.size(1): x + self.pe[:, :T]"),
    "pe_parameter": (
        "the table is an nn.Parameter: it would be trained by the optimizer and is counted in parameters(); a "
        "fixed table is a buffer",
        "self.register_buffer('pe', table) instead of nn.Parameter(table)"),
    "pe_plain_attribute": (
        "self.pe is a plain tensor attribute, not a registered buffer: .to(device) and .double() leave it "
        "behind and state_dict() does not save it",
        "self.register_buffer('pe', table) in __init__, after super().__init__()"),
    "pe_not_persistent": (
        "the buffer is registered with persistent=False, so state_dict() leaves it out; this exercise asks for "
        "it in the state_dict",
        "self.register_buffer('pe', table), without persistent=False"),
    "pe_no_batch_axis": (
        "pe is stored as (max_len, d_model), without the leading batch axis of size 1",
        "store table[None] (or table.unsqueeze(0)), shape (1, max_len, d_model); forward then adds self.pe[:, :T]"),
    "positions_multiplied": (
        "the positions are multiplied into x instead of added",
        "return x + ..., not x * ..."),
    "scaled_by_sqrt_d_model": (
        "x (or the positions) is multiplied by sqrt(d_model); that scaling belongs to the token embedding "
        "(stage 08), not to this module",
        "add the positions to x as they are, with no scale factor"),
    "positions_dropout": (
        "the module applies dropout after adding the positions (the PyTorch tutorial's PositionalEncoding and "
        "nanoGPT do); this exercise's module only adds them",
        "leave out the nn.Dropout: the check compares exact values"),
    "t_from_wrong_axis": (
        "the sequence length T is read from the wrong axis of x",
        "x is (B, T, D): T = x.size(1)"),
    "positions_returned_alone": (
        "only the positions are returned: x is not added to them",
        "return x + (the positions of the first T tokens)"),
    "pe_not_stored": (
        "the table is computed in forward, at every call, instead of once in __init__ and kept as the buffer pe",
        "build the table in __init__ and keep it with self.register_buffer('pe', table[None]); forward only "
        "slices it and adds it: x + self.pe[:, :T]"),
    "positions_reversed": (
        "the positions run backwards (T-1 down to 0): the first token gets the last position",
        "the token at index t is at position t: use torch.arange(T) (0, 1, ..., T-1) as it is, without flipping it"),
    "embedding_padding_idx": (
        "the embedding is created with padding_idx: that row starts at zero and never gets a gradient, so its "
        "position can never learn a vector",
        "padding_idx is for token ids, where a padding token must stay zero; every position is a real position "
        "here: nn.Embedding(max_len, d_model), without padding_idx"),
    "emb_raw_parameter": (
        "emb is a raw tensor (an nn.Parameter table, as ViT stores its positions), not an nn.Embedding: this "
        "exercise asks for the layer the model of stage 08 uses, whose table is emb.weight",
        "self.emb = nn.Embedding(max_len, d_model) holds the same (max_len, d_model) table, as self.emb.weight; "
        "forward looks the rows up with self.emb(torch.arange(T))"),
    "embedding_sizes_swapped": (
        "the embedding is nn.Embedding(d_model, max_len): its sizes are swapped",
        "one row per position: nn.Embedding(num_embeddings=max_len, embedding_dim=d_model); the module's "
        "arguments come in the order LearnedPositionalEmbedding(d_model, max_len)"),
    "rope_rotate_half": (
        'the pairs are (i, i + d_k/2) ("rotate half", as GPT-NeoX and Hugging Face\'s LLaMA implement RoPE): a '
        "valid layout, but not the interleaved pairs (2i, 2i+1) of this course (RoFormer's)",
        "pair feature 2i with feature 2i+1: x_even, x_odd = x[..., 0::2], x[..., 1::2], then interleave the "
        "results: torch.stack((out_even, out_odd), dim=-1).flatten(-2)"),
    "rope_wrong_direction": (
        "the pairs are rotated in the wrong direction (by -m theta_i): the signs of the two sin terms are swapped",
        "out_2i = x_2i cos - x_2i+1 sin and out_2i+1 = x_2i sin + x_2i+1 cos"),
    "rope_positions_ignored": (
        "the positions argument is ignored: the rotation always uses 0, 1, ..., T-1",
        "use arange(T) only when positions is None: `if positions is None: positions = torch.arange(T)`"),
    "rope_not_interleaved": (
        "the rotated pairs are put back concatenated, not interleaved: all the rotated even features first, "
        "then all the odd ones, instead of each pair back in its columns (2i, 2i+1)",
        "put each rotated pair back where it came from: torch.stack((out_even, out_odd), dim=-1).flatten(-2) "
        "(or write out[..., 0::2] = out_even and out[..., 1::2] = out_odd into a new tensor), not torch.cat"),
    "rope_sin_sign": (
        "one of the two sin terms has the wrong sign: each pair is reflected, not rotated, so vector lengths "
        "change",
        "out_2i = x_2i cos - x_2i+1 sin and out_2i+1 = x_2i sin + x_2i+1 cos: one minus sign, in the first line "
        "only"),
    "rope_overwritten_before_read": (
        "one line of the rotation reads a value the other line has already overwritten (e.g. x_2i is replaced "
        "by its rotated value before the line for x_2i+1 uses it)",
        "compute both rotated halves from the original x before writing anything: out_even = x_even * cos - "
        "x_odd * sin, out_odd = x_even * sin + x_odd * cos, then interleave them into a new tensor"),
    "rope_sin_cos_swapped": (
        "cos and sin are swapped in the rotation formula: each pair turns by 90 degrees minus the angle, so "
        "even position 0 is turned",
        "cos multiplies the entry itself and sin the other one of the pair: out_2i = x_2i cos(m theta_i) - "
        "x_2i+1 sin(m theta_i), out_2i+1 = x_2i sin(m theta_i) + x_2i+1 cos(m theta_i)"),
    "rope_angles_transposed": (
        "the angles are built as (d_k/2, T) (theta[:, None] * positions) instead of (T, d_k/2): the code only "
        "runs when T = d_k/2, and then pair i at position t turns by i * theta_t instead of t * theta_i",
        "one row per position, one column per pair: angles = positions[:, None] * theta[None, :], shape (T, d_k/2)"),
    "rope_added": (
        "positions are added to x (like the sinusoidal table) instead of rotating its pairs",
        "RoPE multiplies: each pair (x_2i, x_2i+1) is rotated by the angle m theta_i; nothing is added"),
}

MESSAGES = {
}
