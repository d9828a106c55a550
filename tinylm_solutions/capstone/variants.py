"""Other ``model.py`` files than the reference's, for the capstone's test checks: correct ones that differ from the
reference in text but not in behaviour, and broken ones, each drawn from many ways of writing it.

A learner's test file is graded by what it catches (``tinylm_checks.capstone``): it must pass on a correct
``model.py`` and fail on each broken one. Were those fixed texts (the reference's file, and it with one line
changed), a test could recognise them by their text (a hash of the file) and catch nothing. So each file is drawn
here with a :class:`random.Random` the check seeds: the definitions in another order, other local names, comments
and docstrings, equivalent expressions, other layouts; a broken file's mistake is itself written in one of several
ways, and the words a test might look for (``detach``, ``no_grad``, ``tril(1)``, ``dim=-2``) also appear in correct
files, in comments or in code that changes nothing.

"Not in behaviour" is exact: every choice keeps the same floating-point operations, the same random draws and the
same order of parameters, so a correct file's ``TinyLM`` built after ``torch.manual_seed(s)`` has the reference's
weights, logits, loss and gradients bit for bit (``tests/test_capstone_models.py`` checks it on many draws). What a
correct file keeps is what a learner's test may rely on: the names ``causal_mask``, ``scaled_dot_product_attention``,
``MultiHeadSelfAttention``, ``FeedForward``, ``TransformerBlock``, ``causal_lm_loss`` and ``TinyLM``, their
parameters, the modules' attribute names and ``ValueError`` for a bad size.
"""
from __future__ import annotations

import random

BROKEN = {
    "softmax_over_queries": "the attention's softmax over the queries (dim=-2)",
    "no_scale": "the scores not divided by sqrt(d_k)",
    "mask_sees_next": "the causal mask's tril(diagonal=1)",
    "mask_not_passed": "TinyLM's blocks called without the mask",
    "no_gradient": "a loss that carries no gradient",
    "mask_hides_self": "the causal mask's tril(diagonal=-1)",
    "ignores_input": "TinyLM's logits the same at every position of every sequence (the head reads a mean over the "
                     "batch, or zeros): the loss falls a little, to the characters' frequencies, and no lower",
    "blocks_no_gradient": "TinyLM's blocks outside the gradient: only the embedding and the head learn",
}
"""The ways a broken file can be broken: name -> what is wrong (for the checks' own tests and messages)."""


def model_py(rng: random.Random, broken: str | None = None) -> str:
    """The text of a ``model.py`` drawn with ``rng``: a correct one (``broken`` None) or one broken in the named way
    (a key of :data:`BROKEN`; KeyError for another)."""
    if broken is not None and broken not in BROKEN:
        raise KeyError(broken)
    return _Writer(rng, broken).text()


class _Writer:
    """One file's choices, then its text."""

    def __init__(self, rng: random.Random, broken: str | None):
        self.rng, self.broken = rng, broken
        pick = rng.choice
        self.q = pick(['"', "'"])  # the file's quotes
        self.gap = pick(["\n\n", "\n\n", "\n"])  # two blank lines between definitions, or one
        self.sqrt = pick(["math.sqrt", "math.sqrt", "sqrt"])  # from math import sqrt, or import math
        self.ninf = pick(["float({q}-inf{q})".format(q=self.q), "-math.inf" if self.sqrt == "math.sqrt" else
                          "float({q}-inf{q})".format(q=self.q), "-torch.inf"])
        self.F = pick(["F", "F", "torch.nn.functional"])  # torch.nn.functional imported as F, or spelled out
        self.comments = rng.random()  # how often a line gets a comment
        self.docstrings = rng.random()  # how often a definition gets a docstring

    # ---------------------------------------------------------------- helpers
    def pick(self, options):
        return self.rng.choice(options)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def comment(self, *options: str) -> str:
        """A trailing comment, now and then."""
        return f"  # {self.pick(options)}" if options and self.chance(self.comments) else ""

    def doc(self, indent: str, *options: str) -> str:
        """A docstring line (with its newline), now and then."""
        if not options or not self.chance(self.docstrings):
            return ""
        return f'{indent}"""{self.pick(options)}"""\n'

    def s(self, text: str) -> str:
        """A string literal in the file's quotes."""
        return f"{self.q}{text}{self.q}"

    # ---------------------------------------------------------------- the file
    def text(self) -> str:
        head = self.header()
        parts = [self.causal_mask(), self.attention(), self.multihead(), self.feed_forward(), self.block(),
                 self.loss(), self.tiny_lm()]
        order = list(range(len(parts)))
        if self.chance(0.7):  # definitions may come in any order: names are looked up when called
            first = order[:-1]
            self.rng.shuffle(first)
            order = first + order[-1:] if self.chance(0.7) else self.rng.sample(order, len(order))
        return head + self.gap + self.gap.join(parts[i].rstrip("\n") + "\n" for i in order).rstrip("\n") + "\n"

    def header(self) -> str:
        doc = self.pick([
            '"""A tiny decoder-only Transformer language model (GPT-style, Pre-LN), in one file.\n\nShapes: B batch, '
            "T positions, D = d_model, H = num_heads, d_k = D / H, V = vocab_size.\n\"\"\"\n",
            '"""TinyLM: a GPT-style language model in one file (Pre-LN blocks, learned positions, tied head)."""\n',
            '"""The model of tiny-transformer/: causal mask, attention, multi-head attention, feed-forward, Pre-LN '
            'block, TinyLM."""\n',
            "# model.py: everything the model needs, in the order it is used\n",
            "",
        ])
        torch_lines = ["import torch"]
        nn_line = self.pick(["from torch import nn", "import torch.nn as nn", "from torch import nn"])
        f_line = self.pick(["import torch.nn.functional as F", "from torch.nn import functional as F"])
        torch_lines += [f_line, nn_line] if self.chance(0.5) else [nn_line, f_line]
        if self.F != "F" and self.chance(0.6):
            torch_lines.remove(f_line)
        math_line = "import math" if self.sqrt == "math.sqrt" else "from math import sqrt"
        if self.chance(0.8):
            lines = [math_line, "", *torch_lines]
        else:
            lines = [*torch_lines, math_line]
        return (doc + "\n" if doc else "") + "\n".join(lines) + "\n"

    # ---------------------------------------------------------------- causal_mask
    def causal_mask(self) -> str:
        shift = {"mask_sees_next": 1, "mask_hides_self": -1}.get(self.broken, 0)
        ones = self.pick(["torch.ones(T, T, dtype=torch.bool, device=device)",
                          "torch.ones((T, T), dtype=torch.bool, device=device)",
                          "torch.ones(T, T, device=device, dtype=torch.bool)"])
        diagonal = {0: ["", "0", "diagonal=0"], 1: ["1", "diagonal=1"], -1: ["-1", "diagonal=-1"]}[shift]
        i = self.pick(["i", "idx", "pos", "positions", "t"])
        style = self.pick(["method", "method", "function", "arange", "triu"])
        body = []
        if style == "method":
            body.append(f"    return {ones}.tril({self.pick(diagonal)})")
        elif style == "function":
            d = self.pick(diagonal)
            body.append(f"    return torch.tril({ones}{', ' + d if d else ''})")
        elif style == "arange":
            body.append(f"    {i} = torch.arange(T, device=device)")
            query, key = f"{i}[:, None]", self.pick([f"{i}[None, :]", f"{i}[None]", i])
            body.append({0: f"    return {key} <= {query}", 1: f"    return {key} <= {query} + 1",
                         -1: f"    return {key} < {query}"}[shift] if self.chance(0.5) else
                        {0: f"    return {query} >= {key}", 1: f"    return {query} + 1 >= {key}",
                         -1: f"    return {query} > {key}"}[shift])
        else:
            above = self.pick({0: ["1", "diagonal=1"], 1: ["2", "diagonal=2"], -1: ["", "0"]}[shift])
            body.append(f"    return ~{ones}.triu({above})")
        body[-1] += self.comment("True where query t may attend to key s: s <= t", "(T, T) bool",
                                 "tril(1) would let position t see token t + 1", "lower triangle, diagonal included")
        decorator = "@torch.no_grad()\n" if self.chance(0.2) else ""
        return (f"{decorator}def causal_mask(T, device=None):\n"
                + self.doc("    ", "(T, T) bool, True where query t may attend to key s: s <= t.",
                           "The causal mask: position t sees positions 0..t.",
                           "True on and below the diagonal (not tril(-1): a position sees itself).")
                + "\n".join(body) + "\n")

    # ---------------------------------------------------------------- attention
    def attention(self) -> str:
        scores = self.pick(["scores", "att", "sim", "logits", "s", "a"])
        weights = self.pick(["weights", "probs", "attn", "p", "w"])
        lines = []
        mm = self.pick(["q @ k.transpose(-2, -1)", "q @ k.transpose(-1, -2)", "torch.matmul(q, k.transpose(-2, -1))",
                        "q @ k.mT", "torch.matmul(q, k.transpose(-1, -2))"])
        size = self.pick(["q.size(-1)", "q.shape[-1]", "k.size(-1)", "q.size(dim=-1)"])
        scale_style = self.pick(["inline", "local d", "local scale", "div"])
        if scale_style == "local d":
            d = self.pick(["d_k", "dk", "head_dim", "d"])
            lines.append(f"    {d} = {size}")
            size = d
        if scale_style == "local scale":
            scale = self.pick(["scale", "norm", "temperature"])
            lines.append(f"    {scale} = {self.sqrt}({size})")
            divided = f"{mm} / {scale}"
        elif scale_style == "div":
            divided = self.pick([f"torch.div({mm}, {self.sqrt}({size}))", f"({mm}).div({self.sqrt}({size}))"])
        else:
            divided = f"{mm} / {self.sqrt}({size})"
        if self.broken == "no_scale":
            divided = mm  # computed, maybe, and never used: the realistic slip
        lines.append(f"    {scores} = {divided}" + self.comment("(..., T_q, T_k)", "q k^T / sqrt(d_k)",
                                                                 "scaled by 1/sqrt(d_k)"))
        lines.append("    if mask is not None:")
        masked = self.pick([f"{scores}.masked_fill(~mask, {self.ninf})",
                            f"{scores}.masked_fill(mask.logical_not(), {self.ninf})",
                            f"{scores}.masked_fill(mask == 0, {self.ninf})",
                            f"torch.where(mask, {scores}, {self.ninf})"])
        lines.append(f"        {scores} = {masked}" + self.comment("hidden keys get -inf", "mask True = may attend"))
        dim = "-2" if self.broken == "softmax_over_queries" else "-1"
        dim_text = self.pick([dim, dim, dim, f"{scores}.dim() - {dim[1]}", f"{scores}.ndim - {dim[1]}"])
        softmax = self.pick([f"{scores}.softmax(dim={dim_text})", f"{scores}.softmax({dim_text})",
                             f"torch.softmax({scores}, dim={dim_text})", f"{self.F}.softmax({scores}, dim={dim_text})",
                             f"torch.softmax({scores}, {dim_text})"])
        lines.append(f"    {weights} = {softmax}" + self.comment(
            "each query's weights over the keys sum to 1", "over the keys (dim=-1, not dim=-2)", "(..., T_q, T_k)"))
        style = self.pick(["pair", "matmul", "local"])
        if style == "pair":
            lines.append(f"    return {weights} @ v, {weights}" + self.comment("(..., T_q, d_v), (..., T_q, T_k)"))
        elif style == "matmul":
            lines.append(f"    return torch.matmul({weights}, v), {weights}")
        else:
            out = self.pick(["out", "output", "context", "y"])
            lines.append(f"    {out} = {weights} @ v" + self.comment("(..., T_q, d_v)"))
            lines.append(f"    return {out}, {weights}")
        return ("def scaled_dot_product_attention(q, k, v, mask=None):\n"
                + self.doc("    ", "softmax(q k^T / sqrt(d_k)) v over the last two dims; mask True = may attend. "
                                   "Returns (out, weights).",
                           "Scaled dot-product attention (Vaswani et al. 2017, 3.2.1): (out, weights).",
                           "Attention of q over k, v; returns the output and the weights.")
                + "\n".join(lines) + "\n")

    # ---------------------------------------------------------------- multi-head attention
    def multihead(self) -> str:
        B, T, D = self.pick([("B", "T", "D"), ("b", "t", "d"), ("batch", "seq", "width"), ("n", "length", "dim")])
        init = ["    def __init__(self, d_model, num_heads):", "        super().__init__()"]
        check = [f"        if d_model % num_heads{self.pick(['', ' != 0'])}:",
                 "            raise ValueError(" + self.pick([
                     'f"d_model={d_model} is not divisible by num_heads={num_heads}"',
                     'f"num_heads={num_heads} must divide d_model={d_model}"',
                     'f"cannot split d_model={d_model} into {num_heads} heads"']).replace('"', self.q) + ")"]
        sizes = self.pick([["        self.num_heads, self.d_k = num_heads, d_model // num_heads"],
                           ["        self.num_heads = num_heads", "        self.d_k = d_model // num_heads"]])
        linears = self.pick([  # created in this order whatever the layout: the random draws follow it
            ["        self.W_Q, self.W_K = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)",
             "        self.W_V, self.W_O = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)"],
            [f"        self.{n} = nn.Linear(d_model, d_model)" for n in ("W_Q", "W_K", "W_V", "W_O")],
            [f"        for name in ({self.s('W_Q')}, {self.s('W_K')}, {self.s('W_V')}, {self.s('W_O')}):",
             "            setattr(self, name, nn.Linear(d_model, d_model))"]])
        first = [check, sizes] if self.chance(0.6) else [sizes, check]
        init += [*first[0], *first[1], *linears] if self.chance(0.7) else [*check, *linears, *sizes]
        heads = self.pick([
            f".view({B}, {T}, self.num_heads, self.d_k).transpose(1, 2)",
            f".reshape({B}, {T}, self.num_heads, self.d_k).transpose(1, 2)",
            f".view({B}, {T}, self.num_heads, -1).transpose(1, 2)",
            ".unflatten(-1, (self.num_heads, self.d_k)).transpose(1, 2)"])
        merge = self.pick([f".transpose(1, 2).reshape({B}, {T}, {D})",
                           f".transpose(1, 2).contiguous().view({B}, {T}, {D})",
                           ".transpose(1, 2).flatten(2)", f".transpose(1, 2).reshape({B}, {T}, -1)"])
        out = self.pick(["out", "heads", "context", "y"])
        t = self.pick([name for name in ("t", "z", "tensor", "h") if name not in (B, T, D)])  # a helper's argument
        call = self.pick(["mask", "mask", "mask=mask"])
        forward = ["    def forward(self, x, mask=None):", f"        {B}, {T}, {D} = x.shape"]
        method = []
        style = self.pick(["nested", "nested", "locals", "method"])
        if style == "nested":
            split = self.pick(["split", "heads", "to_heads"])
            forward += ["", f"        def {split}({t}):" + self.comment(f"({B}, {T}, {D}) -> ({B}, H, {T}, d_k)"),
                        f"            return {t}{heads}", "",
                        f"        {out}, _ = scaled_dot_product_attention({split}(self.W_Q(x)), {split}(self.W_K(x)), "
                        f"{split}(self.W_V(x)), {call})"]
        elif style == "locals":
            q, k, v = self.pick([("q", "k", "v"), ("queries", "keys", "values"), ("q_", "k_", "v_")])
            forward += [f"        {q} = self.W_Q(x){heads}", f"        {k} = self.W_K(x){heads}",
                        f"        {v} = self.W_V(x){heads}",
                        f"        {out} = scaled_dot_product_attention({q}, {k}, {v}, {call})[0]"]
        else:
            name = self.pick(["_split", "_heads", "_split_heads"])
            method = ["", f"    def {name}(self, {t}):", f"        {B}, {T}, _ = {t}.shape",
                      f"        return {t}{heads}"]
            forward += [f"        {out}, _ = scaled_dot_product_attention(self.{name}(self.W_Q(x)), "
                        f"self.{name}(self.W_K(x)), self.{name}(self.W_V(x)), {call})"]
        forward.append(f"        return self.W_O({out}{merge})" + self.comment(f"({B}, {T}, {D})", "heads merged back"))
        doc = self.doc("    ", "Multi-head self-attention with W_Q, W_K, W_V, W_O.",
                       "H heads of d_k = D / H each, one output projection.")
        parts = [init, method, [""], forward] if method and self.chance(0.5) else [init, [""], forward, method]
        return "class MultiHeadSelfAttention(nn.Module):\n" + doc + "\n".join(line for p in parts for line in p) + "\n"

    # ---------------------------------------------------------------- feed-forward
    def feed_forward(self) -> str:
        init = ["    def __init__(self, d_model, d_ff):", "        super().__init__()"]
        init += self.pick([["        self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)"],
                           ["        self.linear1 = nn.Linear(d_model, d_ff)",
                            "        self.linear2 = nn.Linear(d_ff, d_model)"]])
        gelu = self.pick([f"{self.F}.gelu", "torch.nn.functional.gelu", f"{self.F}.gelu"])
        h = self.pick(["h", "hidden", "z", "x"])
        forward = ["    def forward(self, x):"]
        forward += self.pick([
            [f"        return self.linear2({gelu}(self.linear1(x)))" + self.comment("(B, T, D)")],
            [f"        {h} = {gelu}(self.linear1(x))" + self.comment("(B, T, d_ff)"),
             f"        return self.linear2({h})"],
            [f"        {h} = self.linear1(x)", f"        {h} = {gelu}({h})", f"        return self.linear2({h})"]])
        return ("class FeedForward(nn.Module):\n"
                + self.doc("    ", "Position-wise feed-forward: linear, GELU, linear.",
                           "Two linear layers with a GELU between them.")
                + "\n".join(init) + "\n\n" + "\n".join(forward) + "\n")

    # ---------------------------------------------------------------- block
    def block(self) -> str:
        norm = self.pick(["nn.LayerNorm(d_model)", "nn.LayerNorm(d_model)", "nn.LayerNorm(d_model, eps=1e-5)"])
        init = ["    def __init__(self, d_model, num_heads, d_ff):", "        super().__init__()"]
        init += self.pick([
            [f"        self.norm1, self.attn = {norm}, MultiHeadSelfAttention(d_model, num_heads)",
             f"        self.norm2, self.ffn = {norm}, FeedForward(d_model, d_ff)"],
            [f"        self.norm1 = {norm}", "        self.attn = MultiHeadSelfAttention(d_model, num_heads)",
             f"        self.norm2 = {norm}", "        self.ffn = FeedForward(d_model, d_ff)"]])
        mask = self.pick(["mask", "mask=mask"])
        h = self.pick(["h", "y", "normed"])
        forward = ["    def forward(self, x, mask=None):"]
        forward += self.pick([
            [f"        x = x + self.attn(self.norm1(x), {mask})", "        return x + self.ffn(self.norm2(x))"],
            [f"        x = self.attn(self.norm1(x), {mask}) + x", "        x = self.ffn(self.norm2(x)) + x",
             "        return x"],
            [f"        {h} = self.norm1(x)", f"        x = x + self.attn({h}, {mask})", f"        {h} = self.norm2(x)",
             f"        x = x + self.ffn({h})", "        return x"]])
        forward[-1] += self.comment("(B, T, D)", "the residual stream")
        return ("class TransformerBlock(nn.Module):\n"
                + self.doc("    ", "Pre-LN: x + attn(norm1(x)), then x + ffn(norm2(x)).", "A Pre-LN Transformer block.")
                + "\n".join(init) + "\n\n" + "\n".join(forward) + "\n")

    # ---------------------------------------------------------------- loss
    def loss(self) -> str:
        lines = []
        V = self.pick(["V", "vocab", "n_vocab"])
        if self.chance(0.15):
            lines.append("    labels = labels.detach()" + self.comment("ids carry no gradient anyway"))
        lines.append(f"    {V} = {self.pick(['logits.size(-1)', 'logits.shape[-1]'])}")
        pred = self.pick([f"logits[:, :-1].reshape(-1, {V})", "logits[:, :-1].flatten(0, 1)",
                          f"logits[:, :-1].contiguous().view(-1, {V})", f"logits[..., :-1, :].reshape(-1, {V})"])
        target = self.pick(["labels[:, 1:].reshape(-1)", "labels[:, 1:].flatten()",
                            "labels[:, 1:].contiguous().view(-1)", "labels[..., 1:].reshape(-1)"])
        kw = self.pick([", ignore_index=-100", ", ignore_index=-100", ""])
        if self.broken == "no_gradient":
            style = self.pick(["detached input", "tensor of item", "detached loss"])
            if style == "detached input":
                lines.append(f"    return {self.F}.cross_entropy({pred}.detach(), {target}{kw}).requires_grad_()")
            elif style == "tensor of item":
                lines.append(f"    return torch.tensor({self.F}.cross_entropy({pred}, {target}{kw}).item(), "
                             "requires_grad=True)")
            else:
                lines += [f"    loss = {self.F}.cross_entropy({pred}, {target}{kw})",
                          "    return loss.detach().requires_grad_(True)"]
        else:
            style = self.pick(["one", "locals"])
            if style == "one":
                lines.append(f"    return {self.F}.cross_entropy({pred}, {target}{kw})")
            else:
                lines += [f"    pred, target = {pred}, {target}" + self.comment("logits at t, labels at t + 1"),
                          f"    return {self.F}.cross_entropy(pred, target{kw})"]
        return ("def causal_lm_loss(logits, labels):\n"
                + self.doc("    ", "Next-token cross-entropy: logits at t against labels at t + 1, -100 ignored.",
                           "The language-modelling loss: each position predicts the next token.")
                + "\n".join(lines) + "\n")

    # ---------------------------------------------------------------- TinyLM
    def tiny_lm(self) -> str:
        init = ["    def __init__(self, vocab_size, max_seq_len, d_model, num_heads, num_layers, d_ff):",
                "        super().__init__()"]
        keep = "        self.max_seq_len = max_seq_len"
        early = self.chance(0.6)
        if early:
            init.append(keep)
        init += self.pick([  # the token embedding is made before the positions' (the random draws follow the order)
            ["        self.token_emb, self.pos_emb = nn.Embedding(vocab_size, d_model), "
             "nn.Embedding(max_seq_len, d_model)"],
            ["        self.token_emb = nn.Embedding(vocab_size, d_model)",
             "        self.pos_emb = nn.Embedding(max_seq_len, d_model)"]])
        blocks = "TransformerBlock(d_model, num_heads, d_ff)"
        init += self.pick([
            [f"        self.blocks = nn.ModuleList({blocks} for _ in range(num_layers))"],
            [f"        self.blocks = nn.ModuleList([{blocks} for _ in range(num_layers)])"],
            ["        self.blocks = nn.ModuleList()", "        for _ in range(num_layers):",
             f"            self.blocks.append({blocks})"]])
        init += ["        self.norm = nn.LayerNorm(d_model)",
                 "        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)",
                 "        self.lm_head.weight = self.token_emb.weight" + self.comment("weight tying: one matrix",
                                                                                     "the head shares the embedding")]
        if not early:
            init.append(keep)
        two_d = self.pick(["p.dim() == 2", "p.ndim == 2", "len(p.shape) == 2", "p.dim() > 1"])
        residual = self.pick([f"name.endswith(({self.s('W_O.weight')}, {self.s('linear2.weight')}))",
                              f"name.endswith({self.s('W_O.weight')}) or name.endswith({self.s('linear2.weight')})",
                              f"name.split({self.s('.')})[-2] in ({self.s('W_O')}, {self.s('linear2')})"])
        normal = self.pick(["nn.init.normal_(p, 0.0, std)", "nn.init.normal_(p, mean=0.0, std=std)",
                            "torch.nn.init.normal_(p, std=std)"])
        zeros = self.pick(["nn.init.zeros_(p)", "nn.init.constant_(p, 0.0)", "torch.nn.init.zeros_(p)"])
        bias = self.pick([f"name.endswith({self.s('bias')})", f"name.endswith({self.s('.bias')})"])
        init.append("        for name, p in self.named_parameters():" + self.comment(
            "GPT-2's init: N(0, 0.02), residual projections scaled down", "GPT-2 init"))
        init.append(f"            if {two_d}:")
        init += self.pick([
            [f"                std = 0.02 / {self.sqrt}(2 * num_layers) if {residual} else 0.02",
             f"                {normal}"],
            [f"                std = 0.02", f"                if {residual}:",
             f"                    std = 0.02 / {self.sqrt}(2 * num_layers)", f"                {normal}"]])
        init += [f"            elif {bias}:", f"                {zeros}"]
        forward = ["    def forward(self, input_ids, labels=None):"]
        forward.append(self.pick(["        B, T = input_ids.shape", "        _, T = input_ids.shape",
                                  "        T = input_ids.size(1)", "        T = input_ids.shape[1]"]))
        forward += ["        if T > self.max_seq_len:",
                    "            raise ValueError(" + self.pick([
                        'f"sequence length {T} exceeds max_seq_len={self.max_seq_len}"',
                        'f"{T} tokens, but max_seq_len is {self.max_seq_len}"',
                        'f"input of length {T} is longer than max_seq_len={self.max_seq_len}"',
                    ]).replace('"', self.q) + ")"]
        mask_name = self.pick(["mask", "mask", "causal", "attn_mask"])
        device = self.pick(["device=input_ids.device", "input_ids.device"])
        mask_line = f"        {mask_name} = causal_mask(T, {device})"
        pos = self.pick(["pos", "positions", "idx"])
        embed = []
        if self.chance(0.5):
            embed.append(f"        {pos} = torch.arange(T, device=input_ids.device)")
            pos_expr = f"self.pos_emb({pos})"
        else:
            pos_expr = "self.pos_emb(torch.arange(T, device=input_ids.device))"
        embed.append("        x = " + (f"self.token_emb(input_ids) + {pos_expr}" if self.chance(0.7)
                                       else f"{pos_expr} + self.token_emb(input_ids)") + self.comment("(B, T, D)"))
        forward += [mask_line, *embed] if self.chance(0.4) else [*embed, mask_line]
        block = self.pick(["block", "layer", "blk"])
        call = self.pick([mask_name, mask_name, f"mask={mask_name}"])
        if self.broken == "mask_not_passed":
            call = self.pick(["", "None", "mask=None"])
        run = f"{block}(x{', ' + call if call else ''})"
        head = "self.lm_head(self.norm(x))"
        loop = [f"        for {block} in self.blocks:", f"            x = {run}"]
        if self.broken == "blocks_no_gradient":
            style = self.pick(["no_grad", "detach each", "detach after", "detach at the head"])
            if style == "no_grad":
                loop = ["        with torch.no_grad():", f"            for {block} in self.blocks:",
                        f"                x = {run}"]
            elif style == "detach each":
                loop[-1] = f"            x = {run}.detach()"
            elif style == "detach after":
                loop.append("        x = x.detach()")
            else:
                head = "self.lm_head(self.norm(x.detach()))"
        if self.broken == "ignores_input":  # one distribution for the whole batch: it cannot be memorised
            style = self.pick(["mean of x", "mean of logits", "zeros"])
            if style == "mean of x":
                loop.append(self.pick(["        x = x.mean(dim=(0, 1), keepdim=True).expand_as(x)",
                                       "        x = x.mean((0, 1), keepdim=True).expand(input_ids.size(0), T, -1)"]))
            elif style == "mean of logits":
                head = f"{head}.mean(dim=(0, 1), keepdim=True).expand(input_ids.size(0), T, -1)"
            else:
                loop.append(self.pick(["        x = torch.zeros_like(x)", "        x = x * 0"]))
        forward += loop
        forward.append(f"        logits = {head}" + self.comment("(B, T, V)"))
        forward += self.pick([
            ["        return logits, None if labels is None else causal_lm_loss(logits, labels)"],
            ["        if labels is None:", "            return logits, None",
             "        return logits, causal_lm_loss(logits, labels)"],
            ["        loss = None", "        if labels is not None:", "            loss = causal_lm_loss(logits, labels)",
             "        return logits, loss"]])
        return ("class TinyLM(nn.Module):\n"
                + self.doc("    ", "Token and learned position embeddings, Pre-LN blocks, a final LayerNorm, a head "
                                   "tied to the token embedding. forward(input_ids, labels=None) -> (logits, loss or "
                                   "None).",
                           "A GPT-style language model: forward(input_ids (B, T), labels=None) -> (logits, loss).")
                + "\n".join(init) + "\n\n" + "\n".join(forward) + "\n")
