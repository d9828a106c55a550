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
        "x (or the positions) is multiplied by sqrt(d_model); Vaswani et al. (§3.4) scale the token "
        "embeddings before this module adds the table (the course's TinyLM does so with positions='sinusoidal'), "
        "so this module only adds",
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
        "one of the two sin terms has the wrong sign: each pair is stretched and squeezed along its diagonals (by "
        "cos θ ± sin θ), not rotated, so vector lengths change",
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
    # ---- what the module's checks share
    "position.none": "none",
    "position.works_for_other_shape": "it works when x is {shape}: x is (B, T, D), so T = x.size(1) (or x.size(-2))",
    "position.output": "the output",
    "position.output_shape": {
        "problem": "the output has the wrong shape",
        "expected": "(B, T, D) = {shape}, like x",
    },
    "position.output_shape_hint": "the output has the shape of x, (B, T, D): x plus the positions, broadcast over the "
                                  "batch",
    "position.dropout": {
        "problem": "some outputs are 0 and the others are scaled up",
        "got": "{zeroed} of {total} values set to 0",
    },
    "position.float32_tried": "{made}.float(), x {shape} float32, seed {seed}",
    # core.not_equal, with a note on what the learner's values are (the frequencies read back from them)
    # ---- frequencies read back from a table or a rotation: {said} is "pair frequencies [...] (radians per
    # position)", {dname} the width's name in the exercise (D, d_model, d_k), {widths} the widths tried
    "position.frequencies.said": "pair frequencies {values} (radians per position)",
    "position.frequencies.wrong_sign": "{said}: every one has the wrong sign",
    "position.frequencies.growing_mod_2pi": "{said}: 10000^(+2i/D), growing (read modulo 2 pi), instead of falling by "
                                            "{expected_ratio:.4g} per pair",
    "position.frequencies.all_one": "{said}: every pair has frequency 1, as if the exponent 2i/D were rounded to 0",
    "position.frequencies.all_same": "{said}: every pair has the same frequency; they must fall from pair to pair",
    "position.frequencies.first_off": "{said}: geometric, each {ratio:.4g} times the previous (expected "
                                      "{expected_ratio:.4g}), but pair 0 turns by {first:.4g} instead of 1",
    "position.frequencies.growing": "{said}: growing, each {ratio:.4g} times the previous",
    "position.frequencies.ratio": "{said}: each {ratio:.4g} times the previous instead of {expected_ratio:.4g}",
    "position.frequencies.whole_numbers": "{said}: whole numbers, as if the angles were rounded down",
    "position.frequencies.alike": ", for {dname} = {widths} alike",
    "position.frequencies.i_over_d": "{said}, i.e. 10000^(-i/D) (the same as base 100 with 2i/D){alike}",
    "position.frequencies.doubled": "{said}, i.e. 10000^(-4i/D) (the same as base 1e8 with 2i/D){alike}",
    "position.frequencies.base": "{said}, i.e. base {base:.4g} instead of 10000{alike}",
    "position.frequencies.n_is_size": "{said}, i.e. 10000^(-2i/N) with N = {ns} where {dname} = {widths}: N is {size}, "
                                      "not {dname}",
    "position.frequencies.n_fixed": "{said}, i.e. 10000^(-2i/N) with N = {n:.4g} for {dname} = {widths} alike: a fixed "
                                    "number where {dname} belongs",
    "position.frequencies.n_unknown": "{said}, i.e. 10000^(-2i/N) with N = {ns} where {dname} = {widths}",
    # ---- sinusoidal_position_encoding
    "sinusoidal_position_encoding.tried": "{call}, seed {seed}",
    "sinusoidal_position_encoding.what": "the table",
    "sinusoidal_position_encoding.wrong_shape": {
        "problem": "the table has the wrong shape",
        "hint": "one row per position and one column per feature: torch.zeros(max_len, d_model)",
    },
    "sinusoidal_position_encoding.dtype": {
        "problem": "the table has dtype {dtype}",
        "expected": "{default}, torch's default float dtype (like torch.zeros(max_len, d_model))",
    },
    "sinusoidal_position_encoding.integer_table": "an integer table truncates every sin and cos: create it with "
                                                  "torch.zeros(max_len, d_model) and use float positions "
                                                  "(torch.arange(max_len).float())",
    "sinusoidal_position_encoding.wide_table": "a float64 table would turn float32 embeddings into float64 when added: "
                                               "don't pass dtype=torch.float64 (or end with "
                                               ".to(torch.get_default_dtype()))",
    "sinusoidal_position_encoding.row0": {
        "problem": "row 0 (position 0) is not [0, 1, 0, 1, ...]",
        "expected": "[0, 1, 0, 1, ...]: position 0 has angle 0 in every pair, sin 0 = 0 in the even columns and "
                    "cos 0 = 1 in the odd ones",
        "hint": "column 2i is sin(pos / 10000^(2i/D)) and column 2i+1 is cos(pos / 10000^(2i/D)), with positions 0, "
                "1, ..., max_len - 1",
    },
    "sinusoidal_position_encoding.pair_norm": {
        "problem": "sin^2 + cos^2 is not 1 for every pair of columns (2i, 2i+1)",
        "expected": "PE[pos, 2i]^2 + PE[pos, 2i+1]^2 = 1: columns 2i and 2i+1 are the sin and the cos of one angle",
        "got": "{norm:.4f} for pair {pair} (columns {even_column}, {odd_column}) at position {position}",
        "hint": "compute one angle per pair, pos / 10000^(2i/D), and put its sin in column 2i and its cos in column "
                "2i+1",
    },
    "sinusoidal_position_encoding.frequencies": {
        "problem": "the frequencies (the angle of each pair at position 1) are wrong",
        "expected": "{values}: 10000^(-2i/D) for pair i, geometric, each {ratio:.4g} times the previous",
        "got": "{said}; the largest difference is at pair {pair} (columns {even_column}, {odd_column})",
    },
    "sinusoidal_position_encoding.fallback": "the angle of pair i at position pos is pos / 10000^(2i/D): build a "
                                             "(max_len, 1) column of positions and a (D/2,) row of frequencies and "
                                             "multiply them",
    "sinusoidal_position_encoding.second_size_fallback": "it worked for the first size: look for a number written "
                                                         "where max_len or d_model belongs",
    "sinusoidal_position_encoding.passed": "(max_len, d_model) in the default dtype; row 0 is [0, 1, 0, 1, ...]; sin^2 "
                                           "+ cos^2 = 1 for every pair; frequencies 10000^(-2i/D); values equal the "
                                           "closed form",
    # ---- PositionalEncoding
    "positional_encoding.hints": {
        "positions_not_sliced": "slice the positions axis, the second: x + self.pe[:, :T] with T = x.size(1) "
                                "(self.pe[:T] slices the batch axis, of size 1, and keeps all max_len rows)",
        "table_transposed": "pe must be (1, max_len, d_model): the class is PositionalEncoding(d_model, max_len) and "
                            "the table sinusoidal_position_encoding(max_len, d_model), two different orders; check "
                            "both, and that nothing transposes the table",
    },
    "positional_encoding.pe_near_miss": {
        "problem": "PositionalEncoding has no attribute pe (the table seems to be {near})",
        "mistake_hint": "the check reads the table by name: call it self.pe",
    },
    "positional_encoding.no_pe": {
        "problem": "PositionalEncoding has no attribute pe",
        "expected": "self.register_buffer('pe', table) in __init__",
        "hint": "create the table in __init__ and register it as the buffer pe",
    },
    "positional_encoding.adds_without_table": "no tensor attribute at all, yet forward adds the right table to x "
                                              "{shape}",
    "positional_encoding.pe_not_a_tensor": {
        "problem": "self.pe is a {kind}, not a tensor",
        "hint": "self.register_buffer('pe', table) with table a tensor of shape (1, max_len, d_model)",
    },
    "positional_encoding.pe_parameter": {
        "problem": "pe is a parameter",
        "expected": "a buffer: in named_buffers(), not in parameters()",
    },
    "positional_encoding.pe_not_a_buffer": {
        "problem": "pe is not a registered buffer",
        "got": "buffers: {buffers}; pe is a plain {kind} attribute",
    },
    "positional_encoding.has_parameters": {
        "problem": "PositionalEncoding has parameters",
        "expected": "no parameters: the table is fixed",
        "hint": "the sinusoidal table needs nothing trained: no nn.Parameter, nn.Embedding or nn.Linear here",
    },
    "positional_encoding.pe_not_persistent": {
        "problem": "pe is not in state_dict()",
        "got": "state_dict() keys: {keys}",
    },
    "positional_encoding.pe_shape": {
        "problem": "pe has the wrong shape",
        "hint": "table[None] has shape (1, max_len, d_model); the arguments are PositionalEncoding(d_model, max_len), "
                "in that order",
    },
    "positional_encoding.pe_dtype": {
        "problem": "pe has dtype {dtype}",
        "expected": "{default}, torch's default float dtype (the dtype of the embeddings it is added to)",
    },
    "positional_encoding.integer_table": "an integer table truncates every sin and cos: build it with "
                                         "torch.zeros(max_len, d_model) and float positions "
                                         "(torch.arange(max_len).float())",
    "positional_encoding.wide_table": "x + pe takes the wider dtype of the two: a {dtype} buffer turns the model's "
                                      "{default} embeddings into {dtype}. Build the table in the default dtype "
                                      "(torch.zeros(max_len, d_model), no dtype=torch.float64, no numpy float64 "
                                      "array), or convert it with .to(torch.get_default_dtype()) before "
                                      "register_buffer",
    "positional_encoding.pe_what": "the buffer pe (the table of your exercise 1)",
    "positional_encoding.pe_fallback": "fill pe with the table of exercise 1: sinusoidal_position_encoding(max_len, "
                                       "d_model)[None]",
    "positional_encoding.pe_not_moved": {
        "problem": "pe did not follow .double()",
    },
    "positional_encoding.tried": "{made}.double(), x {shape} ({label}), float64, seed {seed}",
    "positional_encoding.fallback": "forward returns x + self.pe[:, :T]: print the shapes of x, self.pe and "
                                    "self.pe[:, :T] in a cell of its own",
    "positional_encoding.passed": "pe is a persistent buffer {shape} (in state_dict, not a parameter) in the default "
                                  "dtype; forward adds pe[:, :T] for T = max_len and T < max_len, with B != T; float32 "
                                  "in, float32 out",
    # ---- LearnedPositionalEmbedding
    "learned_positional_embedding.hints": {
        "positions_not_sliced": "look up only the sequence's positions: self.emb(torch.arange(T, device=x.device)) "
                                "with T = x.size(1)",
        "positions_from_one": "the positions are torch.arange(T): 0, 1, ..., T-1",
    },
    "learned_positional_embedding.emb_near_miss": {
        "problem": "{cls} has no attribute emb (the embedding seems to be {near})",
        "mistake_hint": "the check copies the weights by name: call the embedding self.emb, not self.{near}",
    },
    "learned_positional_embedding.emb_tensor": {
        "problem": "emb is a {kind} {shape}, not an nn.Embedding",
    },
    "learned_positional_embedding.emb_not_an_embedding": {
        "problem": "emb is a {kind}, not an nn.Embedding",
        "hint": "self.emb = nn.Embedding(max_len, d_model): one trainable row of d_model numbers per position",
    },
    "learned_positional_embedding.emb_size": {
        "problem": "emb has the wrong size",
    },
    "learned_positional_embedding.extra_row_hint": "one row per position, max_len rows for positions 0 ... max_len - 1 "
                                                   "(no extra row: nothing is padded here): nn.Embedding(max_len, "
                                                   "d_model)",
    "learned_positional_embedding.emb_size_hint": "the arguments are LearnedPositionalEmbedding(d_model, max_len), in "
                                                  "that order, and the embedding has one row per position: "
                                                  "nn.Embedding(max_len, d_model)",
    "learned_positional_embedding.param_count": {
        "problem": "wrong number of parameters",
        "expected": "max_len * d_model = {expected_n}, all in emb.weight",
        "hint": "the module holds exactly self.emb = nn.Embedding(max_len, d_model); no other parameters",
    },
    "learned_positional_embedding.params_besides": "{n}; besides emb.weight: {extra}",
    "learned_positional_embedding.tried": "{made}.double(), emb.weight set to random values, x {shape} ({label}), "
                                          "float64, seed {seed}",
    "learned_positional_embedding.fallback": "forward returns x + self.emb(torch.arange(T)): row t of emb.weight is "
                                             "added to the token at position t",
    "learned_positional_embedding.no_gradient": {
        "problem": "no gradient reaches emb.weight",
        "mistake_hint": "compute the positions with self.emb(...) (or self.emb.weight[:T]), without .detach(), .data "
                        "or torch.no_grad()",
    },
    "learned_positional_embedding.row_without_gradient": {
        "problem": "row {row} of emb.weight (position {row}) gets no gradient",
    },
    "learned_positional_embedding.rows_without_gradient": {
        "problem": "rows {rows} of emb.weight get no gradient",
    },
    "learned_positional_embedding.every_row_trained": "a gradient in each of rows 0 ... {last}: every position of the "
                                                      "sequence is trained",
    "learned_positional_embedding.zero_rows": "zero gradient in {n} of {t} rows{padding}",
    "learned_positional_embedding.untrained_row_hint": "a row without gradient is a position that never learns: look "
                                                       "for .detach(), .data, or a row set to a constant in forward",
    "learned_positional_embedding.rows_after_used": {
        "problem": "rows {t} and after of emb.weight got a gradient from a sequence of length {t}",
        "hint": "only the first T positions take part: rows T ... max_len - 1 must not be used",
    },
    "learned_positional_embedding.passed": "nn.Embedding({L}, {D}), {n} parameters; forward adds emb(arange(T)) for T "
                                           "= max_len and T < max_len; gradients reach exactly the first T rows; "
                                           "float32 in, float32 out",
    # ---- apply_rope (bonus)
    "apply_rope.hints": {
        "positions_from_one": "when positions is None, use torch.arange(T): the first token is at position 0 and is "
                              "not rotated",
        "exponent_i_over_d": "theta_i = 10000 ** (-2 * i / d_k) for pair i = 0, 1, ..., d_k/2 - 1 (or "
                             "10000 ** (-torch.arange(0, d_k, 2) / d_k))",
        "exponent_doubled": "torch.arange(0, d_k, 2) already gives 2i: theta = 10000 ** (-torch.arange(0, d_k, 2) / "
                            "d_k)",
        "wrong_base": "theta_i = 10000 ** (-2 * i / d_k): check the constant 10000",
        "exponent_denominator": "d_k is the size of the last axis, d_k = x.shape[-1], whatever the number of "
                                "dimensions of x ((B, T, d_k) or (B, H, T, d_k)): theta_i = 10000 ** (-2 * i / d_k), "
                                "no number written in",
        "exponent_sign": "theta_i = 10000 ** (-2 * i / d_k), with the minus sign: from 1 down to about 1/10000",
        "integer_division": "keep the exponent a float: with two_i = torch.arange(0, d_k, 2), -two_i / d_k with /, not "
                            "//",
        "wrong_frequencies": "theta_i = 10000 ** (-2 * i / d_k) for pair i, the same frequencies as the sinusoidal "
                             "table",
        "hard_coded_axes": "read the sizes from the end, T, d_k = x.shape[-2], x.shape[-1], and slice with x[..., "
                           "0::2]: that works for (B, T, d_k) and (B, H, T, d_k) alike",
    },
    "apply_rope.tried": "x {shape} (B, H, T, d_k), positions=None, float64, seed {seed}",
    "apply_rope.tried_3d": "x {shape} (B, T, d_k), positions={positions}, float64, seed {seed}",
    "apply_rope.relative_tried": "q and k {shape}: the same vector at every position, seed {seed}",
    "apply_rope.unit_tried": "x {shape}, (1, 0, 1, 0, ...) at every position",
    "apply_rope.result": "the result",
    "apply_rope.what": "the rotated x",
    "apply_rope.shape_hint": "a rotation keeps the shape of x",
    # the sizes of x a learner's code may have used in place of d_k
    "apply_rope.size.batch": "the batch size B = x.shape[0]",
    "apply_rope.size.heads": "the number of heads H = x.shape[1]",
    "apply_rope.size.length": "the sequence length T = x.shape[-2]",
    "apply_rope.unrotated": "x comes back unrotated at every position",
    "apply_rope.runs_when_square": "{error}; with x {shape} (T = d_k/2 = {half}) it runs",
    "apply_rope.position_0_changed": {
        "problem": "position 0 changed",
        "expected": "out[..., 0, :] == x[..., 0, :]: the angle at position 0 is 0, a rotation by 0 changes nothing",
        "got": "{value:.4f} instead of {original:.4f} at {at}",
        "hint": "rotate each pair by the angle m theta_i: cos(0) = 1 and sin(0) = 0 leave position 0 as it is",
    },
    "apply_rope.length_changed": {
        "problem": "the rotation changed the length of a vector",
        "expected": "|out[..., t, :]| == |x[..., t, :]| (a rotation keeps lengths); {length:.4f} at {at}",
        "hint": "both entries of a pair must turn by the same angle: out_2i = x_2i cos - x_2i+1 sin, out_2i+1 = x_2i "
                "sin + x_2i+1 cos, with one cos and one sin per pair",
    },
    "apply_rope.not_relative": {
        "problem": "the scores between rotated queries and keys depend on more than the offset m - n",
        "expected": "<rope(q, {next_m}), rope(k, {next_n})> == <rope(q, {m}), rope(k, {n})> (same offset {offset})",
        "got": "{next_score:.4f} and {score:.4f}",
        "hint": "the angle must be position x theta_i, proportional to the position, the same theta_i for queries and "
                "keys",
    },
    "apply_rope.fallback": "out_2i = x_2i cos(m theta_i) - x_2i+1 sin(m theta_i), out_2i+1 = x_2i sin(m theta_i) + "
                           "x_2i+1 cos(m theta_i), theta_i = 10000^(-2i/d_k), m the position",
    "apply_rope.positions_fallback": "the token at index t is at position positions[t]: its angle is positions[t] * "
                                     "theta_i",
    "apply_rope.passed": "position 0 unchanged, norms preserved, scores depend only on m - n; equal to the reference "
                         "on (B, H, T, d_k) and (B, T, d_k), with and without positions",
}

PLACES = {
    # mistake id -> where to look for it in the learner's code: shown with the mistake, before its fix
    "sin_cos_swapped":
        "the two lines that fill the table: which function goes into which column slice",
    "concatenated_layout":
        "the step that puts the sines and cosines into the table: which columns each lands in",
    "exponent_i_over_d":
        "the numerator of your exponent: what your loop variable or arange counts",
    "exponent_doubled":
        "the numerator of your exponent: what your arange already holds before you scale it",
    "wrong_base":
        "the constant your frequencies are built on (and its log, if you use the exp/log form)",
    "exponent_denominator":
        "what the exponent is divided by: which variable, and where its value comes from",
    "exponent_sign":
        "where positions become angles: does the frequency term divide or multiply, with what sign?",
    "integer_division":
        "every division in the exponent and the angle, and the dtype of your positions",
    "cos_own_frequency":
        "the angle inside your cos: how it is computed, next to the sin's",
    "positions_from_one":
        "where your positions come from: the first value of the range",
    "wrong_frequencies":
        "the line that computes the frequencies or angles: exponent, base and sign, one at a time",
    "table_dtype":
        "the tensors you build the table from: the dtype each one starts with",
    "table_transposed":
        "the shape you create the table with, and the order of max_len and d_model in your calls",
    "positions_not_sliced":
        "the line of forward that adds the table: how many of its positions you take",
    "pe_parameter":
        "the line of __init__ that stores the table on self",
    "pe_plain_attribute":
        "how your __init__ attaches the table to the module",
    "pe_not_persistent":
        "the arguments of your register_buffer call",
    "pe_no_batch_axis":
        "the shape of the table you register in __init__",
    "positions_multiplied":
        "the operator in the return line of your forward",
    "scaled_by_sqrt_d_model":
        "any factor in your forward besides x and the table",
    "positions_dropout":
        "any dropout your __init__ creates, and where forward calls it",
    "t_from_wrong_axis":
        "the line of forward that reads T: which axis of x it reads",
    "positions_returned_alone":
        "the return line of your forward",
    "pe_not_stored":
        "your forward: the lines that compute the table at every call",
    "positions_reversed":
        "the range of positions you index with: its order (any flip, or T - 1 - t)",
    "embedding_padding_idx":
        "the nn.Embedding(...) line in your __init__: its keyword arguments",
    "emb_raw_parameter":
        "the line of __init__ that creates self.emb, and how forward reads from it",
    "embedding_sizes_swapped":
        "the order of the two sizes in your nn.Embedding call: what is one row?",
    "rope_rotate_half":
        "the step that takes the two members of each pair out of x: which features go together",
    "rope_wrong_direction":
        "the sign of the angle on its way into the rotation: sin terms, frequencies, positions",
    "rope_positions_ignored":
        "the line that computes the angles: does it read the positions argument?",
    "rope_not_interleaved":
        "the last step, where the rotated halves go back into one tensor",
    "rope_sin_sign":
        "the two rotation lines: the sign in front of each sin term",
    "rope_overwritten_before_read":
        "the two rotation lines: what each one reads, and whether the other has written to it",
    "rope_sin_cos_swapped":
        "the two rotation lines: which member of the pair each cos and each sin multiplies",
    "rope_angles_transposed":
        "the line that multiplies positions by frequencies: which of the two runs along the rows?",
    "rope_added":
        "the step where the angles meet x: which operation joins them",
}
