"""Wrong capstone repositories (stage 13): each a learner's repository with one file wrong, as repo() returns it."""
import hashlib

from tinylm_checks._text import TEXT
from tinylm_checks import (check_attention_tests, check_capstone_generate, check_capstone_model, check_capstone_report,
                           check_capstone_repository,
                           check_capstone_train, check_causal_mask_tests, check_overfit_tests)
from tinylm_solutions.capstone import repo as reference_repo


def _with(name: str, old: str, new: str, doc: str):
    """The reference repository with ``old`` replaced by ``new`` in file ``name``."""
    def repo():
        files = reference_repo()
        assert old in files[name], (name, old)
        files[name] = files[name].replace(old, new, 1)
        return files
    repo.__name__ = "repo_" + doc.split(":")[0]
    repo.__doc__ = doc
    return repo


def _stub(name: str):
    """The repository with ``name``'s cell left as the template."""
    def repo():
        files = reference_repo()
        files[name] = "# YOUR CODE HERE\nraise NotImplementedError()\n"
        return files
    repo.__name__ = "repo_stub_" + name.replace("/", "_").replace(".", "_")
    repo.__doc__ = f"{name} left as the template."
    return repo


repo_stub = _stub("model.py")


def repo_missing_generate():
    """generate.py never written."""
    files = reference_repo()
    del files["generate.py"]
    return files


model_imports_course = _with("model.py", "import torch\n", "import torch\nfrom tinylm_solutions.model import TinyLM as _T\n",
                             "model_imports_course: model.py imports the course's TinyLM")
model_names = _with("model.py", "self.W_Q, self.W_K = ", "self.W_q, self.W_K = ",
                    "model_names: the query projection named W_q")
model_no_scale = _with("model.py", " / math.sqrt(q.size(-1))", "", "model_no_scale: attention without 1/sqrt(d_k)")
model_mask_not_passed = _with("model.py", "x = block(x, mask)", "x = block(x)",
                              "model_mask_not_passed: the blocks never get the mask")
model_loss_unshifted = _with("model.py", "logits[:, :-1].reshape(-1, V), labels[:, 1:].reshape(-1)",
                             "logits.reshape(-1, V), labels.reshape(-1)", "model_loss_unshifted: the loss is not shifted")
model_untied_copy = _with("model.py", "self.lm_head.weight = self.token_emb.weight  # weight tying: one matrix",
                          "self.lm_head.weight.data.copy_(self.token_emb.weight.data)  # tied (equal values)",
                          "model_untied_copy: the head's weight copied from the embedding, two parameters (issue 41)")


def model_no_init():
    """model.py without GPT-2's init: PyTorch's default initialisation (issue 41)."""
    files = reference_repo()
    text = files["model.py"]
    start = text.index("        for name, p in self.named_parameters():  # GPT-2's init")
    end = text.index("    def forward(self, input_ids, labels=None):")
    files["model.py"] = text[:start] + "\n" + text[end:]
    return files


def attention_tests_shapes_only():
    """Compares shapes, not values."""
    files = reference_repo()
    text = files["tests/test_attention.py"]
    text = text.replace("    assert torch.allclose(out, F.scaled_dot_product_attention(q, k, v), atol=1e-5)\n",
                        "    assert out.shape == (2, 3, 5, 4)\n")
    text = text.replace("    assert torch.allclose(weights.sum(dim=-1), torch.ones(4, 6), atol=1e-6)\n", "")
    files["tests/test_attention.py"] = text
    return files
mask_tests_mask_only = _with("tests/test_causal_mask.py", "    assert torch.allclose(a[:, :4], b[:, :4], atol=1e-6)",
                             "    return", "mask_tests_mask_only: tests the mask function, not the model")
overfit_tests_finite_only = _with("tests/test_overfit_batch.py", "    assert loss.item() < 0.1 * math.log(12)",
                                  "    assert loss.item() < 100", "overfit_tests_finite_only: asserts too little")
overfit_tests_wrong = _with("tests/test_overfit_batch.py", "    assert loss.item() < 0.1 * math.log(12)",
                            "    assert loss.item() > 0.1 * math.log(12)", "overfit_tests_wrong: the assert is reversed")
config_no_lr = _with("configs/tiny.yaml", "  lr: 3.0e-3\n", "", "config_no_lr: configs/tiny.yaml lacks train.lr")
train_no_step = _with("train.py", "        optimizer.step()\n", "", "train_no_step: the optimizer never steps")
train_ignores_steps = _with("train.py", 'steps = args.steps if args.steps is not None else train["steps"]',
                            'steps = train["steps"]', "train_ignores_steps: --steps is read but the config's steps used")
train_labels_shifted = _with("train.py", "        _, loss = model(x, labels=x)",
                             "        y = torch.stack([data[s + 1:s + T + 1] for s in starts])\n"
                             "        _, loss = model(x, labels=y)", "train_labels_shifted: notebook 09's y passed as labels")
def train_no_data():
    """No --data option: always data/train.txt."""
    files = reference_repo()
    text = files["train.py"]
    start, end = text.index('    parser.add_argument("--data"'), text.index("    args = parser.parse_args()")
    text = text[:start] + text[end:]
    files["train.py"] = text.replace("open(args.data, ", 'open("data/train.txt", ')
    return files


train_no_vocab = _with("train.py", ', "vocab": vocab}', "}", "train_no_vocab: the checkpoint lacks the vocabulary")
generate_no_crop = _with("generate.py", "idx[:, -model.max_seq_len:]", "idx",
                         "generate_no_crop: the context is not cropped to max_seq_len")
generate_unseeded = _with("generate.py", ", generator=generator)", ")",
                          "generate_unseeded: sampling ignores --seed")
generate_fixed_seed = _with("generate.py", "torch.Generator().manual_seed(args.seed)", "torch.Generator().manual_seed(0)",
                            "generate_fixed_seed: the generator is always seeded with 0")
def generate_temperature_after_softmax():
    """The temperature divides the probabilities after the softmax: torch.multinomial normalises them again, so it
    changes nothing (issue 41)."""
    files = reference_repo()
    text = files["generate.py"]
    for old, new in (("logits = logits[:, -1] / temperature", "logits = logits[:, -1]"),
                     ("torch.multinomial(logits.softmax(dim=-1), 1", "torch.multinomial(logits.softmax(dim=-1) / temperature, 1")):
        assert old in text, old
        text = text.replace(old, new)
    files["generate.py"] = text
    return files


generate_top_k_plus_one = _with("generate.py", "torch.topk(logits, min(top_k, logits.size(-1)))",
                                "torch.topk(logits, min(top_k + 1, logits.size(-1)))",
                                "generate_top_k_plus_one: top-k keeps k + 1 tokens (issue 41)")
report_short = _with("report.md", "Yes: on one fixed batch the loss falls from ln V ≈ 4.6 to near 0 within 150 steps, so "
                     "the model, the loss and the\ntraining step can learn; its perplexity on new text then rises far "
                     "above V.", "Yes.", "report_short: a one-word answer")
attention_tests_sums_only = _with(
    "tests/test_attention.py", "    assert torch.allclose(out, F.scaled_dot_product_attention(q, k, v), atol=1e-5)\n",
    "    assert out.shape == (2, 3, 5, 4)\n", "attention_tests_sums_only: shapes, and the weights' sums")
def mask_tests_not_all_true():
    """Only asks that the mask hide something; the model is not tested."""
    files = reference_repo()
    text = files["tests/test_causal_mask.py"]
    text = text.replace("    assert torch.equal(causal_mask(5), torch.ones(5, 5, dtype=torch.bool).tril())",
                        "    assert not causal_mask(5).all()  # some key is hidden")
    files["tests/test_causal_mask.py"] = text.replace("    assert torch.allclose(a[:, :4], b[:, :4], atol=1e-6)",
                                                      "    return")
    return files
overfit_tests_nan_passes = _with("tests/test_overfit_batch.py", "    assert loss.item() < 0.1 * math.log(12)",
                                 "    assert not loss.item() >= 0.1 * math.log(12)",
                                 "overfit_tests_nan_passes: 'not >=' lets a NaN through")


def attention_tests_none():
    """Helper functions, no test: every test_ renamed check_."""
    files = reference_repo()
    files["tests/test_attention.py"] = files["tests/test_attention.py"].replace("def test_", "def check_")
    return files

mask_tests_wrong_mask = _with("tests/test_causal_mask.py", "dtype=torch.bool).tril())", "dtype=torch.bool).triu())",
                              "mask_tests_wrong_mask: expects an upper-triangular mask")
report_no_heading = _with("report.md", "## What happened in the ablations?", "## Ablations",
                          "report_no_heading: a question's heading changed")

def overfit_tests_loss_fell():
    """Asserts only that the loss fell, not how far."""
    files = reference_repo()
    text = files["tests/test_overfit_batch.py"]
    for old, new in (("    for _ in range(100):\n", "    first = None\n    for _ in range(100):\n"),
                     ("        _, loss = model(batch, labels=batch)\n",
                      "        _, loss = model(batch, labels=batch)\n        first = loss.item() if first is None else first\n"),
                     ("    assert loss.item() < 0.1 * math.log(12)  # from ln V at the start to near 0",
                      "    assert loss.item() < first  # it learned something")):
        assert old in text, old
        text = text.replace(old, new)
    files["tests/test_overfit_batch.py"] = text
    return files


def overfit_tests_loss_fell_a_fifth():
    """Asserts that the loss fell by a fifth: more than a model with the same logits everywhere manages (it ends near
    0.9 of its first loss), less than one whose blocks get no gradient (0.7)."""
    files = overfit_tests_loss_fell()
    text = files["tests/test_overfit_batch.py"]
    files["tests/test_overfit_batch.py"] = text.replace("assert loss.item() < first", "assert loss.item() < 0.8 * first")
    assert files["tests/test_overfit_batch.py"] != text
    return files


REPORT_HEADINGS = [TEXT[f"capstone.question.{n}"] for n in range(1, 6)]


def report_no_numbers():
    """Every answer long enough, none with a number of the runs (issue 41)."""
    files = reference_repo()
    answer = ("The model learned well on the batch and the results matched what the lesson predicted, as the tables "
              "and plots of my runs showed clearly.")
    files["report.md"] = "# Report\n" + "".join(f"\n## {q}\n\n{answer}\n" for q in REPORT_HEADINGS)
    return files


def theatre():
    """Test theatre: each test file compares sha256(model.py) with the reference's hash, and report.md is lorem
    ipsum (a security review scored it 7 of 16 points)."""
    files = reference_repo()
    digest = hashlib.sha256(files["model.py"].encode()).hexdigest()
    for name in ("tests/test_attention.py", "tests/test_causal_mask.py", "tests/test_overfit_batch.py"):
        files[name] = ("import hashlib, pathlib\n\n\ndef test_model_is_the_reference():\n"
                       f"    assert hashlib.sha256(pathlib.Path('model.py').read_bytes()).hexdigest() == {digest!r}\n")
    lorem = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore."
    files["report.md"] = "# Report\n" + "".join(f"\n## {q}\n\n{lorem}\n" for q in REPORT_HEADINGS)
    return files


def attention_tests_read_the_text():
    """Tests the text of model.py, not what it computes."""
    files = reference_repo()
    files["tests/test_attention.py"] = (
        "import pathlib\n\n\ndef test_scaled_and_over_the_keys():\n"
        "    text = pathlib.Path('model.py').read_text()\n"
        "    assert '/ math.sqrt(q.size(-1))' in text and 'softmax(dim=-1)' in text\n")
    return files


def mask_tests_print_the_model():
    """Prints model.py and fails on purpose, to read the check's model.py from its message."""
    files = reference_repo()
    files["tests/test_causal_mask.py"] = (
        "import pathlib\n\n\ndef test_show():\n    print(pathlib.Path('model.py').read_text())\n"
        "    assert False, pathlib.Path('model.py').read_text()\n")
    return files


STUB_ATTENTION, STUB_MASK = _stub("tests/test_attention.py"), _stub("tests/test_causal_mask.py")
STUB_OVERFIT, STUB_REPORT = _stub("tests/test_overfit_batch.py"), _stub("report.md")

ROWS = [
    (check_capstone_model, repo_stub, None, "model.py is still the template"),
    (check_capstone_model, model_imports_course, None, "imports tinylm_solutions.model"),
    (check_capstone_model, model_names, None, "not named as in the course"),
    (check_capstone_model, model_no_scale, None, "scaled_dot_product_attention's out differs"),
    (check_capstone_model, model_mask_not_passed, None, "logits differ"),
    (check_capstone_model, model_loss_unshifted, None, "not the next-token cross-entropy"),
    (check_capstone_model, model_untied_copy, "head_not_tied", "two parameters with equal values"),
    (check_capstone_model, model_no_init, "model_no_gpt2_init", "not GPT-2's initialisation"),
    (check_attention_tests, attention_tests_shapes_only, "tests_miss_softmax_over_queries",
     "passes on a model.py whose attention takes the softmax over the queries"),
    (check_attention_tests, attention_tests_sums_only, "tests_miss_no_scale",
     "passes on a model.py whose attention does not divide"),
    (check_causal_mask_tests, mask_tests_not_all_true, "tests_miss_mask_sees_next",
     "passes on a model.py whose causal mask lets position t see token t + 1"),
    (check_overfit_tests, overfit_tests_nan_passes, "tests_miss_mask_hides_self",
     "passes on a model.py whose causal mask also hides each position itself"),
    (check_attention_tests, attention_tests_none, None, "pytest found no test in tests/test_attention.py"),
    (check_attention_tests, STUB_ATTENTION, None, "tests/test_attention.py is still the template"),
    (check_causal_mask_tests, mask_tests_wrong_mask, None, "fails on a correct model.py"),
    (check_causal_mask_tests, STUB_MASK, None, "tests/test_causal_mask.py is still the template"),
    (check_overfit_tests, STUB_OVERFIT, None, "tests/test_overfit_batch.py is still the template"),
    (check_capstone_report, STUB_REPORT, None, "report.md is still the template"),
    (check_causal_mask_tests, mask_tests_mask_only, "tests_miss_mask_not_passed", "passes on a model.py whose TinyLM does not pass the mask"),
    (check_overfit_tests, overfit_tests_finite_only, "tests_miss_no_gradient", "passes on a model.py whose loss carries no gradient"),
    (check_overfit_tests, overfit_tests_wrong, None, "fails on a correct model.py"),
    (check_overfit_tests, overfit_tests_loss_fell, "tests_miss_ignores_input",
     "passes on a model.py whose logits are the same at every position"),
    (check_overfit_tests, overfit_tests_loss_fell_a_fifth, "tests_miss_blocks_no_gradient",
     "passes on a model.py whose blocks get no gradient"),
    (check_attention_tests, theatre, None, "tests/test_attention.py fails on a correct model.py: a test failed"),
    (check_causal_mask_tests, theatre, None, "tests/test_causal_mask.py fails on a correct model.py: a test failed"),
    (check_overfit_tests, theatre, None, "tests/test_overfit_batch.py fails on a correct model.py: a test failed"),
    (check_attention_tests, attention_tests_read_the_text, None, "fails on a correct model.py"),
    (check_causal_mask_tests, mask_tests_print_the_model, None, "fails on a correct model.py: a test failed"),
    (check_capstone_train, config_no_lr, None, "train.lr is None"),
    (check_capstone_train, train_no_step, None, "was given --steps 40 and took 0 optimizer steps"),
    (check_capstone_train, train_ignores_steps, None, "was given --steps 40 and took 0 optimizer steps"),
    (check_capstone_train, train_no_vocab, None, "not a dict with config, model and vocab"),
    (check_capstone_train, train_labels_shifted, "labels_shifted_twice", "not near 0"),
    (check_capstone_train, train_no_data, None, "train.py --data did not train on the given text"),
    (check_capstone_generate, repo_missing_generate, None, "has no generate.py"),
    (check_capstone_generate, generate_no_crop, None, "generate.py ended with exit code 1"),
    (check_capstone_generate, generate_unseeded, None, "two runs with the same --seed print different texts"),
    (check_capstone_generate, generate_fixed_seed, None, "two runs with different --seed values print the same text"),
    (check_capstone_generate, generate_temperature_after_softmax, "temperature_no_effect",
     "sampling did not become greedy"),
    (check_capstone_generate, generate_top_k_plus_one, "top_k_keeps_one_more", "outside the 3 most likely"),
    (check_capstone_report, report_short, None, "has 1 words"),
    (check_capstone_report, report_no_numbers, "report_no_numbers", "has no number"),
    (check_capstone_report, report_no_heading, None, "has no section '## What happened in the ablations?'"),
]

LATE_FAILURE = {check_capstone_model: model_loss_unshifted, check_attention_tests: attention_tests_shapes_only,
                check_causal_mask_tests: mask_tests_mask_only, check_overfit_tests: overfit_tests_finite_only,
                check_capstone_train: train_no_step, check_capstone_generate: generate_unseeded,
                check_capstone_report: report_short}
STUB = {check_capstone_model: repo_stub, check_attention_tests: STUB_ATTENTION, check_causal_mask_tests: STUB_MASK,
        check_overfit_tests: STUB_OVERFIT, check_capstone_train: _stub("train.py"),
        check_capstone_generate: _stub("generate.py"), check_capstone_report: STUB_REPORT}

# ---- the repository as a stranger runs it (check_capstone_repository)
repo_no_pythonpath = _with("pyproject.toml", 'pythonpath = ["."]\n', "",
                           "no_pythonpath: pyproject.toml does not tell pytest where model.py is")
repo_train_imports_course = _with("train.py", "from model import TinyLM\n",
                                  "from model import TinyLM\nfrom tinylm_solutions.data import default_corpus\n",
                                  "train_imports_course: train.py imports the course's corpus (as it once did)")
repo_train_loads_course = _with("train.py", "import torch\n",
                                "import importlib\nimport torch\n\nimportlib.import_module('tinylm_solutions.data')\n",
                                "train_loads_course: train.py loads the course by a name no import line shows")
repo_checkpoint_not_ignored = _with(".gitignore", "*.pt\n", "__pycache__/checkpoint.pt\n",
                                    "checkpoint_not_ignored: .gitignore misses the checkpoints")
repo_no_torch_declared = _with("pyproject.toml", '    "torch>=2.5",\n', "",
                               "no_torch_declared: pyproject.toml does not declare torch")


def repo_readme_table_no_loss():
    """README.md without its results table or the word loss anywhere."""
    files = reference_repo()
    files["README.md"] = "# tiny-transformer\n\nRun it: pytest, python train.py, python generate.py\n"
    return files


ROWS += [
    (check_capstone_repository, repo_no_pythonpath, "pytest_no_pythonpath", "plain pytest fails"),
    (check_capstone_repository, repo_train_imports_course, "repo_imports_course", "train.py imports tinylm_solutions"),
    (check_capstone_repository, repo_train_loads_course, "repo_imports_course", "needs the course's packages"),
    (check_capstone_repository, repo_checkpoint_not_ignored, "checkpoint_not_ignored",
     ".gitignore does not ignore checkpoint.pt"),
    (check_capstone_repository, repo_no_torch_declared, None, "does not declare torch"),
    (check_capstone_repository, repo_readme_table_no_loss, None, "README.md has no measured loss"),
]
