"""The reference overfit checklist (stage 09's lab): it names every bug the lab's setups can have, the first one in
the list's order when there are two, leaves a setup as it was; its repair makes a broken setup train exactly like
the healthy one (the notebook's claim "the same weights, the same batch, the same curve")."""
import itertools

import pytest
import torch
import torch.nn.functional as F

from tinylm_checks.probes import OVERFIT_CHECKLIST, overfit_setup
from tinylm_solutions.checklist import CHECKLIST, overfit_checklist, repair

VARIANTS = [(item, v) for item in OVERFIT_CHECKLIST for v in range(4 if item == "parameters_not_in_optimizer" else 2)]


def _ids(seed=0, V=14):
    ids = torch.randint(V - 1, (4, 11), generator=torch.Generator().manual_seed(seed))
    for b, n in enumerate((11, 6, 8, 3)):
        ids[b, n:] = V - 1
    return ids, V - 1, V


def _curve(s, steps=12):
    torch.manual_seed(0)
    losses = []
    for _ in range(steps):
        s.model.train()
        s.optimizer.zero_grad()
        logits, _ = s.model(s.x)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), s.y.reshape(-1))
        loss.backward()
        s.optimizer.step()
        losses.append(loss.item())
    return losses


def test_the_reference_list_is_the_probes_list():
    assert CHECKLIST == OVERFIT_CHECKLIST


def test_a_healthy_setup_passes():
    assert overfit_checklist(overfit_setup(*_ids())) is None


@pytest.mark.parametrize("item, variant", VARIANTS)
def test_every_bug_is_named_and_repaired_to_the_healthy_curve(item, variant):
    s = overfit_setup(*_ids(), {item: variant})
    mode, weights = s.model.training, {k: v.clone() for k, v in s.model.state_dict().items()}
    assert overfit_checklist(s) == item
    assert s.model.training == mode and all(torch.equal(v, s.model.state_dict()[k]) for k, v in weights.items())
    kind = type(s.optimizer)
    repair(s, item)
    assert overfit_checklist(s) is None and type(s.optimizer) is kind
    if kind is torch.optim.AdamW:  # the healthy setup's optimizer (variant 3 is an SGD setup: it stays one)
        assert _curve(s) == _curve(overfit_setup(*_ids()))


@pytest.mark.parametrize("first, second", list(itertools.combinations(OVERFIT_CHECKLIST, 2)))
def test_two_bugs_name_the_earlier(first, second):
    assert overfit_checklist(overfit_setup(*_ids(1), {first: 0, second: 0})) == first


def test_an_unknown_cause_raises():
    with pytest.raises(ValueError, match="cause must be one of"):
        repair(overfit_setup(*_ids()), "labels")
