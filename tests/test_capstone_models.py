"""tinylm_solutions.capstone.variants: the model.py files the capstone's test checks run a learner's tests on. A correct
one computes what the reference computes, bit for bit, in other text; a broken one is broken as its name says, so that
the reference's own tests fail on it; and the check draws them from its seed and the learner's test files."""
import hashlib
import random
import sys
import types

import pytest
import torch

from tinylm_checks import capstone
from tinylm_solutions.capstone.variants import BROKEN, model_py
from tinylm_solutions.capstone import repo

REFERENCE = repo()


def load(text: str, name: str = "model") -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(text, f"<{name}>", "exec"), module.__dict__)
    return module


def behaviour(m: types.ModuleType, seed: int) -> dict:
    """What a learner's test can see of a model.py: the mask, attention with and without a mask (values and
    gradients), a TinyLM built after torch.manual_seed (its parameters in order, logits, loss, every gradient), and
    ValueError for a bad size."""
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    out = {"mask": m.causal_mask(6)}
    q, k = torch.randn(2, 3, 5, 8, generator=g), torch.randn(2, 3, 7, 8, generator=g)
    v = torch.randn(2, 3, 7, 4, generator=g)
    out["attention"] = m.scaled_dot_product_attention(q, k, v)
    x = torch.randn(2, 3, 6, 8, generator=g, requires_grad=True)
    o, w = m.scaled_dot_product_attention(x, x, x, m.causal_mask(6))
    o.sum().backward()
    out["masked"] = (o, w, x.grad)
    model = m.TinyLM(vocab_size=13, max_seq_len=9, d_model=16, num_heads=2, num_layers=2, d_ff=32)
    out["parameters"] = [(name, p.detach().clone()) for name, p in model.named_parameters()]
    out["state"] = sorted(model.state_dict())
    ids = torch.randint(13, (3, 9), generator=g)
    logits, loss = model(ids, labels=ids)
    loss.backward()
    out["forward"] = (logits, loss, [p.grad for p in model.parameters()], model(ids[:, :4])[1])
    for name, call in (("too_long", lambda: model(torch.zeros(1, 10, dtype=torch.long))),
                       ("bad_heads", lambda: m.MultiHeadSelfAttention(10, 3))):
        try:
            call()
            out[name] = None
        except ValueError:
            out[name] = "ValueError"
    return out


def identical(a, b, where: str = "") -> None:
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b), where
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            identical(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            identical(x, y, f"{where}[{i}]")
    else:
        assert a == b, (where, a, b)


def test_a_correct_file_behaves_as_the_reference_bit_for_bit():
    reference = load(REFERENCE["model.py"])
    texts = set()
    for seed in range(60):
        text = model_py(random.Random(seed))
        texts.add(hashlib.sha256(text.encode()).hexdigest())
        identical(behaviour(reference, seed), behaviour(load(text), seed), f"draw {seed}")
    assert len(texts) == 60 and hashlib.sha256(REFERENCE["model.py"].encode()).hexdigest() not in texts


def _passes(model_text: str, test: str) -> bool:
    """Do the reference's tests in ``test`` pass with ``model_text`` as ``model``? (in this process)"""
    saved = sys.modules.get("model")
    sys.modules["model"] = load(model_text)
    try:
        namespace = {}
        exec(compile(REFERENCE[test], test, "exec"), namespace)
        for name, fn in namespace.items():
            if name.startswith("test_"):
                try:
                    fn()
                except AssertionError:
                    return False
        return True
    finally:
        if saved is None:
            sys.modules.pop("model", None)
        else:
            sys.modules["model"] = saved


@pytest.mark.parametrize("test, broken", [(test, name) for test, names in capstone.BROKEN_MODELS.items()
                                          for name in names])
def test_the_reference_tests_pass_on_correct_files_and_fail_on_broken_ones(test, broken):
    """The check's demand is fair: the reference's own test file meets it on every draw tried."""
    draws = 4 if "overfit" in test else 25
    for seed in range(draws):
        assert _passes(model_py(random.Random(seed)), test), (test, seed)
        assert not _passes(model_py(random.Random(seed), broken), test), (test, broken, seed)


def test_every_broken_kind_is_checked_and_written_in_several_ways():
    assert {name for names in capstone.BROKEN_MODELS.values() for name in names} == set(BROKEN)
    for name in BROKEN:
        texts = {model_py(random.Random(seed), name) for seed in range(40)}
        lines = [{line.strip() for line in text.splitlines()} for text in texts]
        assert len(texts) == 40 and not set.intersection(*lines) - set.intersection(
            *({line.strip() for line in model_py(random.Random(seed)).splitlines()} for seed in range(40))), name
    with pytest.raises(KeyError):
        model_py(random.Random(0), "no_such_mistake")


def test_the_words_of_a_mistake_are_in_correct_files_too():
    """A test that looks for the words of a mistake in model.py's text (detach, no_grad, tril(1), dim=-2) also fails
    correct files."""
    correct = "".join(model_py(random.Random(seed)) for seed in range(200))
    for words in ("detach()", "no_grad()", "tril(1)", "dim=-2", "triu("):
        assert words in correct, words


def test_the_check_draws_its_files_from_its_seed_and_the_learner_s_tests():
    tests = {k: v for k, v in REFERENCE.items() if k.startswith("tests/")}
    test = "tests/test_attention.py"
    correct, broken = capstone.models(0, tests, test)
    assert len(correct) == capstone.CORRECT_MODELS and set(broken) == set(capstone.BROKEN_MODELS[test])
    assert len({*correct, *broken.values(), REFERENCE["model.py"]}) == len(correct) + len(broken) + 1
    assert capstone.models(0, tests, test) == (correct, broken)  # the same files: the same verdict
    assert capstone.models(1, tests, test)[0] != correct
    other = {**tests, "tests/test_causal_mask.py": tests["tests/test_causal_mask.py"] + "# a comment\n"}
    assert capstone.models(0, other, test)[0] != correct  # any test file the check writes changes them
