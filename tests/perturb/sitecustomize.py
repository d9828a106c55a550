"""Stand-ins for another machine of the same kind, for the claims tests (tests/test_claims*.py): another CPU rounds
the same sums differently, and a claim that held only on the CPU it was measured on is a wrong claim (issue 40).

``TINYLM_PERTURB`` names the perturbations, separated by commas; conftest.py checks the names, applies them in pytest's
processes and puts this folder on ``PYTHONPATH``, so that every Python process the tests start (the notebooks'
kernels) applies them too, here, before its code runs:

- ``threads1``, ``threads2``, ``threads4``: ``torch.set_num_threads(n)``, and from then on ``torch.set_num_threads``
  keeps ``n`` (the notebooks and the tests ask for one thread; another machine's learner may run with more, and a
  sum split over more threads is added in another order);
- ``mkldnn_off``: ``torch.backends.mkldnn.enabled = False`` (oneDNN off: PyTorch's own kernels);
- ``medium``, ``high``: ``torch.set_float32_matmul_precision`` (float32 matrix multiplies may use lower-precision
  internals where the CPU has them).
"""
import os

PERTURBATIONS = ("threads1", "threads2", "threads4", "mkldnn_off", "medium", "high")


def parse(value: str) -> list[str]:
    """The perturbations ``value`` names (``"threads4,mkldnn_off"``); ValueError naming the known ones for another."""
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in PERTURBATIONS]
    if unknown:
        raise ValueError(f"TINYLM_PERTURB: unknown {', '.join(unknown)}; expected some of {', '.join(PERTURBATIONS)}, "
                         "separated by commas")
    return names


def apply(names: list[str]) -> None:
    """Apply ``names`` (checked by :func:`parse`) to this process's torch."""
    import torch
    for name in names:
        if name.startswith("threads"):
            torch.set_num_threads(int(name.removeprefix("threads")))
            torch.set_num_threads = lambda n: None  # the count stays the perturbation's
        elif name == "mkldnn_off":
            torch.backends.mkldnn.enabled = False
        else:
            torch.set_float32_matmul_precision(name)


def state() -> dict:
    """What this process's torch runs with: the settings the perturbations change."""
    import torch
    return {"threads": torch.get_num_threads(), "mkldnn": torch.backends.mkldnn.enabled,
            "matmul_precision": torch.get_float32_matmul_precision()}


if os.environ.get("TINYLM_PERTURB"):
    try:
        apply(parse(os.environ["TINYLM_PERTURB"]))
    except ValueError:  # conftest.py says so in one line; a process started otherwise runs unperturbed
        pass
