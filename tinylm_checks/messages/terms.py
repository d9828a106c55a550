"""The course's technical terms, English and Chinese (中英术语对照): the one table the Chinese notebooks, the
Chinese messages and the glossary (notebook 00) agree on.

Each entry is ``(english, chinese, note)``: ``chinese`` is what the Chinese text writes (followed by the English
name in parentheses the first time it appears in a notebook and in every hint, because the English name is what a
learner types into a search box); a term the Chinese field writes in English keeps it (``"token"``). ``note`` is
an English gloss, empty for most. Only data: tests/test_zh_text.py checks that no Chinese catalog or notebook
writes a variant of REJECTED (below), tests/test_i18n.py that notebook 00's glossary is this table.
"""

TERMS = (
    ("attention", "注意力", ""),
    ("self-attention", "自注意力", ""),
    ("multi-head attention", "多头注意力", ""),
    ("head", "头", "one of the parallel attentions of multi-head attention"),
    ("query", "查询", ""),
    ("key", "键", ""),
    ("value", "值", ""),
    ("scaled dot-product attention", "缩放点积注意力", ""),
    ("attention weights", "注意力权重", ""),
    ("softmax", "softmax", ""),
    ("mask", "掩码", ""),
    ("causal mask", "因果掩码", ""),
    ("padding mask", "填充掩码", ""),
    ("token", "token", "Chinese texts on language models keep the English word (词元 is the formal name)"),
    ("embedding", "嵌入", ""),
    ("positional encoding", "位置编码", ""),
    ("sinusoidal positional encoding", "正弦位置编码", ""),
    ("learned positional embedding", "可学习位置嵌入", ""),
    ("rotary position embedding (RoPE)", "旋转位置编码", ""),
    ("feed-forward network (FFN)", "前馈网络", "FFN only in formulas, code and the gloss 前馈网络（FFN）"),
    ("activation function", "激活函数", ""),
    ("LayerNorm", "层归一化", ""),
    ("residual connection", "残差连接", ""),
    ("Pre-LN / Post-LN", "Pre-LN（前置层归一化）/ Post-LN（后置层归一化）", "where the LayerNorm sits: before each "
     "sublayer, or after the residual sum; the Chinese text writes the names, explained once as 前置层归一化（Pre-LN）"),
    ("Transformer block", "Transformer 块", ""),
    ("decoder-only", "仅解码器", ""),
    ("language model", "语言模型", ""),
    ("logits", "logits", "unnormalised log-probabilities; Chinese texts keep the English word"),
    ("cross-entropy loss", "交叉熵损失", ""),
    ("perplexity", "困惑度", ""),
    ("weight tying", "权重共享", ""),
    ("output layer (lm_head)", "输出层", ""),
    ("buffer", "缓冲区", "a tensor a module registers with register_buffer: saved and moved with it, never trained"),
    ("parameter", "参数", ""),
    ("gradient", "梯度", ""),
    ("optimizer", "优化器", ""),
    ("learning rate", "学习率", ""),
    ("warmup", "预热", ""),
    ("overfitting", "过拟合", ""),
    ("batch", "批次", "also the name of a shape's first axis; one row of it is a 序列"),
    ("sequence length", "序列长度", ""),
    ("dropout", "dropout", ""),
    ("tokenizer", "分词器", ""),
    ("vocabulary", "词表", ""),
    ("prompt", "提示词", "the text generation starts from"),
    ("sample", "样本", "a text the model generated"),
    ("greedy decoding", "贪心解码", ""),
    ("temperature", "温度", "the divisor of the logits before sampling"),
    ("top-k sampling", "top-k 采样", ""),
    ("autoregressive", "自回归", ""),
    ("ablation", "消融实验", ""),
    ("validation loss", "验证集损失", ""),
    ("held-out data", "留出数据", ""),
    ("random seed", "随机种子", ""),
    ("checkpoint", "检查点", ""),
    ("broadcasting", "广播", ""),
    ("tensor", "张量", ""),
    ("shape", "形状", ""),
    ("matrix multiplication", "矩阵乘法", ""),
    ("variance", "方差", ""),
    ("initialization", "初始化", ""),
    ("bug", "bug", "a mistake in code: Chinese programmers say bug (程序错误 is the formal name; 错误 also means "
     "an error raised, so the course does not use it for a bug)"),
    ("debugging", "调试", ""),
    ("check", "检查", "the cell after each exercise that tests it"),
    ("hint", "提示", ""),
    ("exercise", "练习", ""),
    ("notebook", "笔记本", "a stage of the course is named by its notebook: 笔记本 08"),
    ("capstone", "综合项目", "notebook 13"),
    ("et al.", "等人", "in citations: Vaswani 等人，2017"),
)


REJECTED = {
    "残差主干": "残差流",  # residual stream
    "屏蔽": "遮住",  # a mask's True: the course writes 遮住 (被遮住的键), also for nn.MultiheadAttention's convention
    "被掩码的": "被遮住的",
    "阶段": "笔记本",  # a stage is named by its notebook: 笔记本 08 (a phase of training is 期间: 预热期间)
    "buffer": "缓冲区",  # register_buffer, named_buffers() are code, not the word
    "notebook": "笔记本",
    "FFN": "前馈网络",  # $\mathrm{FFN}$, code and the gloss 前馈网络（FFN） are not the word
    "前置层归一化": "Pre-LN",  # only as its explanation: 前置层归一化（Pre-LN）
    "后置层归一化": "Post-LN",
    "输出头": "输出层",
    "结业项目": "综合项目",
    "毕业项目": "综合项目",
    "prompt": "提示词",
    "开头（prompt）": "提示词（prompt）",
    "et al.": "等人",
    "样本 {": "第 {b} 条序列",  # a row of the batch; 样本 is a generated text
    "样本 0": "第 0 条序列",
    "第一个样本": "第一条序列",
}
"""Variants the Chinese text does not use, each -> the word it uses instead (tests/test_zh_text.py checks the
catalogs and the Chinese notebooks). A variant in English letters is a word of the prose: code (backticks, a code
block, a formula, a code cell's code, identifiers such as register_buffer), and an English gloss in parentheses after
its Chinese word (缓冲区（buffer）) are not prose. A variant may explain the word used, in the course's gloss form
``variant（word``: 前置层归一化（Pre-LN）."""
