"""Probes (tinylm_checks.probes) and generators travel to learner code and back, through the agent's JSON."""
import pytest
import torch

from tinylm_checks import probes
from tinylm_grading.remote import LoopbackTransport, stand_in


@probes.register_probe
class CountingModel(probes.Probe, torch.nn.Module):
    """A model whose logits are ``table[t]`` at position ``t``; it records the lengths it was called with."""

    def __init__(self, table: torch.Tensor):
        torch.nn.Module.__init__(self)
        self.table, self.lengths = table, []

    def forward(self, idx):
        self.lengths.append(idx.shape[1])
        return self.table[: idx.shape[1]].expand(idx.shape[0], -1, -1)

    def probe_spec(self):
        return {"table": self.table}

    @classmethod
    def from_probe_spec(cls, spec, args):
        return cls(spec["table"])

    def probe_report(self):
        return {"lengths": self.lengths}

    def absorb_probe_report(self, report):
        self.lengths = [int(n) for n in probes.expect(report["lengths"], list, "lengths")]


@probes.register_probe
class StepCounter(probes.Probe):
    """Binds to the model passed as argument 0 and counts step() calls."""

    def __init__(self, model):
        self.model, self.steps = model, 0

    def step(self):
        self.steps += 1

    def probe_spec(self):
        return {}

    @classmethod
    def from_probe_spec(cls, spec, args):
        return cls(args[0])

    def probe_report(self):
        return {"steps": self.steps, "bound": isinstance(self.model, CountingModel)}

    def absorb_probe_report(self, report):
        self.steps = probes.expect(report["steps"], int, "steps")
        self.bound = report["bound"]


def learner_generate(model, idx, n, optimizer=None, generator=None):
    for _ in range(n):
        logits = model(idx)[:, -1]  # (B, V)
        nxt = torch.multinomial(logits.softmax(-1), 1, generator=generator)  # (B, 1)
        idx = torch.cat([idx, nxt], 1)
        if optimizer is not None:
            optimizer.step()
    return idx


def remote(fn):
    return stand_in(LoopbackTransport({"f": fn}), "f")


def test_a_probe_runs_in_the_kernel_and_its_record_comes_back():
    model = CountingModel(torch.randn(8, 5))
    out = remote(learner_generate)(model, torch.zeros(2, 1, dtype=torch.long), 3)
    assert out.shape == (2, 4)
    assert model.lengths == [1, 2, 3]  # the grader's probe absorbed the kernel's record


def test_probes_by_keyword_bind_to_earlier_arguments():
    model, opt = CountingModel(torch.randn(8, 5)), StepCounter(None)
    remote(learner_generate)(model, torch.zeros(1, 2, dtype=torch.long), 4, optimizer=opt)
    assert (opt.steps, opt.bound, model.lengths) == (4, True, [2, 3, 4, 5])


def test_remote_sampling_with_a_generator_equals_direct_and_advances_it_the_same():
    table, idx = torch.randn(8, 5), torch.zeros(3, 1, dtype=torch.long)
    g_direct, g_remote = torch.Generator().manual_seed(7), torch.Generator().manual_seed(7)
    direct = learner_generate(CountingModel(table), idx, 5, generator=g_direct)
    got = remote(learner_generate)(CountingModel(table), idx, 5, generator=g_remote)
    assert torch.equal(direct, got)
    assert torch.equal(g_direct.get_state(), g_remote.get_state())


def test_a_positional_generator_comes_back_too():
    def draw(g):
        return torch.rand(3, generator=g)
    g_direct, g_remote = torch.Generator().manual_seed(1), torch.Generator().manual_seed(1)
    assert torch.equal(draw(g_direct), remote(draw)(g_remote))
    assert torch.equal(g_direct.get_state(), g_remote.get_state())


def test_only_registered_probes_are_built():
    transport = LoopbackTransport({"f": learner_generate})
    reply = transport.request({"op": "call", "name": "f", "args": [None, None, 1], "kwargs": {"dict": []},
                               "probes": {"0": {"class": "Agent", "spec": {}}}})
    assert reply["error"] == "KeyError"


def test_a_lying_report_is_refused():
    model = CountingModel(torch.randn(4, 3))
    with pytest.raises(ValueError, match="lengths of type str"):
        model.absorb_probe_report({"lengths": "many"})


def test_registering_needs_a_probe_and_a_free_name():
    with pytest.raises(TypeError, match="Probe subclass"):
        probes.register_probe(int)
    with pytest.raises(TypeError, match="registered already"):
        probes.register_probe(type("CountingModel", (probes.Probe,), {}))


def test_the_agent_setup_builds_probes_from_the_sources_it_sends():
    """What the grader runs in a kernel: probes.py's source, then agent.py's, in one fresh module."""
    from pathlib import Path
    from tinylm_checks import agent
    from tinylm_grading.verdicts import AGENT_SETUP
    namespace = {}
    exec(AGENT_SETUP.format(probes=Path(probes.__file__).read_text(), agent=Path(agent.__file__).read_text()),
         namespace)
    kernel_probes = type(namespace["__tinylm_agent__"]).__init__.__globals__["PROBES"]
    assert kernel_probes is not probes.PROBES  # the kernel's own registry, from the source it was sent
    shipped = {name for name, cls in probes.PROBES.items() if cls.__module__ == "tinylm_checks.probes"}
    assert set(kernel_probes) == shipped  # the course's probes, and not this file's test probes


# ---- a reply costs the grader no more memory than its size (a blind red team's bombs)

def _zip(t: torch.Tensor, compress: bool = False) -> dict:
    """``t`` as ``torch.save``'s zip, optionally deflated (the wire's earlier form: a deflated one inflated 1000:1)."""
    import base64
    import io
    import zipfile
    buf = io.BytesIO()
    torch.save(t, buf)
    raw = buf.getvalue()
    if compress:
        out = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(raw)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
            for info in src.infolist():
                dst.writestr(info.filename, src.read(info), zipfile.ZIP_DEFLATED)
        raw = out.getvalue()
    return {"tensor": base64.b64encode(raw).decode()}


def test_a_tensor_with_more_elements_than_bytes_sent_is_refused():
    """A stride of 0 once made a 2 kB reply a tensor of 4e9 elements: now the bytes must be the shape's exactly."""
    from tinylm_checks.agent import decode, encode
    wire = encode(torch.zeros(1))
    wire["tensor"]["shape"], wire["tensor"]["perm"] = [40_000, 100_000], [0, 1]
    with pytest.raises(ValueError, match=r"shape \(40000, 100000\) needs 16000000000 bytes, got 4"):
        decode(wire)
    wire["tensor"]["shape"], wire["tensor"]["perm"] = [], []
    wire["tensor"]["data"] = "AAAAAAAAAA=="  # 7 bytes for one float32
    with pytest.raises(ValueError, match=r"needs 4 bytes, got 7"):
        decode(wire)


def test_only_the_plain_form_is_read():
    from tinylm_checks.agent import decode, encode
    zipped_forms = (_zip(torch.zeros(1000, dtype=torch.uint8), compress=True), _zip(torch.zeros(3)), {"tensor": "aGVsbG8="})
    for zipped in zipped_forms:
        with pytest.raises(ValueError, match="must come as its dtype, shape, perm, order and data"):
            decode(zipped)
    wire = encode(torch.zeros(2, 3))
    for key, value, message in (("dtype", "object", "dtype 'object' is not carried"),
                                ("perm", [0, 0], r"\[0, 0\] is not an order of a tensor's 2 dimensions"),
                                ("shape", [2, -3], "shape must be a list of at most 32 ints from 0 to 2"),
                                ("shape", [0, 1 << 70], "shape must be a list of at most 32 ints from 0 to 2"),
                                ("shape", [1] * 33, "shape must be a list of at most 32 ints from 0 to 2"),
                                ("order", "middle", "byte order")):
        with pytest.raises(ValueError, match=message):
            decode({"tensor": {**wire["tensor"], key: value}})


def test_a_bool_tensor_holds_only_true_and_false():
    import base64
    from tinylm_checks.agent import decode, encode
    wire = encode(torch.tensor([True, False, True]))
    wire["tensor"]["data"] = base64.b64encode(bytes([7, 0, 255])).decode()
    back = decode(wire)
    assert back.tolist() == [True, False, True] and back.to(torch.uint8).tolist() == [1, 0, 1]


def test_tensors_the_wire_does_not_carry_arrive_as_opaque_values():
    from tinylm_checks.agent import Opaque, decode, encode
    for t in (torch.empty(3, device="meta"), torch.eye(2).to_sparse(),
              torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.quint8)):
        back = decode(encode(t))
        assert isinstance(back, Opaque) and type(back).__name__ == "Tensor", t


def test_dense_tensors_still_travel_with_their_layout():
    from tinylm_checks.agent import decode, encode
    t = torch.arange(12.0).reshape(3, 4).T  # transposed: dense, not contiguous
    back = decode(encode(t))
    assert torch.equal(back, t) and back.stride() == t.stride()
    assert torch.equal(decode(encode(t[:, 1])), t[:, 1])  # a view: the agent sends its own elements only
    for t in (torch.randn(2, 3, 4).permute(2, 0, 1), torch.tensor(2.5), torch.empty(0, 3),
              torch.randn(3, dtype=torch.bfloat16), torch.randn(2, 2, dtype=torch.complex64),
              torch.tensor([True, False]), torch.arange(6, dtype=torch.int64)):
        back = decode(encode(t))
        assert torch.equal(back, t) and back.dtype == t.dtype and back.stride() == t.stride(), t


def test_probe_reports_of_the_wrong_shape_are_refused():
    model = probes.ProbeLM(7, 3)
    report = model.probe_report()
    with pytest.raises(ValueError, match=r"a call's shape that is not a shape"):
        model.absorb_probe_report({**report, "calls": [{"training": False, "shape": torch.zeros(5_000_000)}]})
    with pytest.raises(ValueError, match=r"a gradient of shape \(1,\), expected \(7, 3\)"):
        model.absorb_probe_report({**report, "grads": {"emb": torch.zeros(1), "head": None}})
    spy = probes.SpyOptimizer(model)
    with pytest.raises(ValueError, match=r"a gradient of shape \(0, 7, 3\), expected \(7, 3\)"):
        spy.absorb_probe_report({"events": [{"event": "step", "grad_norm": 1.0,
                                             "grads": {"emb": torch.zeros(0, 7, 3), "head": None}}]})


def _tree(children: dict) -> list:
    """Agent-style module descriptions: ``children`` maps a module id to the ids of its children."""
    return [{"id": i, "children": [[str(k), c] for k, c in enumerate(cs)], "params": [], "buffers": []}
            for i, cs in children.items()]


def test_a_module_tree_with_too_many_paths_or_a_cycle_is_refused():
    from tinylm_grading.remote import AgentError, check_module_tree
    check_module_tree(_tree({0: [1, 2], 1: [3], 2: [3], 3: []}))  # a shared child: fine
    dag = _tree({i: [i + 1, i + 1] for i in range(30)} | {30: []})  # 2**30 paths from the top
    with pytest.raises(AgentError, match="more than 10000 paths"):
        check_module_tree(dag)
    with pytest.raises(AgentError, match="contains itself"):
        check_module_tree(_tree({0: [1], 1: [2], 2: [0]}))


def test_the_agents_answer_must_be_one_string_literal():
    import json
    from tinylm_grading.verdicts import one_string_literal as _one_string_literal
    from tinylm_grading.remote import AgentError
    for answer in ({"result": "it's \"quoted\" \\ and\nnew"}, {"a": "'"}, {"b": '"'}, {"c": "\\"}):
        text = repr(json.dumps(answer))
        assert _one_string_literal(text) == text
    for bomb in ("[" + "[]," * 1000 + "]", "'a'" * 1000, "'a' 'b'", "'a\\\\' + 'b'", "'''a'''", "'a\nb'", "", "'"):
        with pytest.raises(AgentError):
            _one_string_literal(bomb)


def test_opaque_values_cost_one_class_per_kind_at_most():
    from tinylm_checks import agent
    values = agent.decode([{"opaque": f"T{i}", "module": "m"} for i in range(1000)] + [{"opaque": "T1", "module": "m"}])
    assert all(isinstance(v, agent.Opaque) for v in values) and type(values[1]) is type(values[-1])
    assert type(values[1]).__name__ == "T1" and len({type(v) for v in values}) == 257  # 256 kinds, then Opaque
    assert type(agent.decode({"opaque": "Mine", "module": "m"})).__name__ == "Mine"  # the next reply: its own kinds


# ---- the overfit lab's setup: a report from the kernel is data the grader checks before it builds anything

def _lab_setup():
    from tinylm_checks.probes import overfit_setup
    ids = torch.randint(9, (3, 9), generator=torch.Generator().manual_seed(0))
    return overfit_setup(ids, 9, 10, d_model=8, num_layers=1)


def test_a_setup_travels_and_comes_back_equal():
    from tinylm_checks.probes import OverfitSetup
    s = _lab_setup()
    copy = OverfitSetup.from_probe_spec(s.probe_spec(), [])
    assert copy.probe_report()["optimizer"] == s.probe_report()["optimizer"]
    for name, t in s.model.state_dict().items():
        assert torch.equal(copy.model.state_dict()[name], t)
    assert torch.equal(copy.y, s.y) and torch.equal(copy.x, s.x)


@pytest.mark.parametrize("change, words", [
    (lambda r: r["model"]["config"].update(num_layers=10 ** 6), "model sizes out of range"),
    (lambda r: r["model"]["config"].update(d_model=10 ** 5), "model sizes out of range"),
    (lambda r: r["optimizer"]["groups"][0]["params"].append(torch.zeros(2 ** 19)), "too large"),
    (lambda r: r["optimizer"].update(kind="LBFGS"), "kind 'LBFGS'"),
    (lambda r: r.update(y=torch.zeros(2, 2, dtype=torch.long)), "shape"),
])
def test_a_setups_report_out_of_bounds_is_refused(change, words):
    s = _lab_setup()
    report = s.probe_report()
    change(report)
    with pytest.raises(ValueError, match=words):
        s.absorb_probe_report(report)
