"""A venv with another PyTorch beside the course's learner-side dependencies, to test the supported range's ends.

``python tools/torch_venv.py 2.5.0 2.15.0`` makes (or finds) one venv per version and prints its folder;
tests/test_torch_range.py uses :func:`venv` the same way. Each lives outside the repository, in
``$XDG_CACHE_HOME/tinylm-course/torch-<version>`` (``~/.cache`` without it), and holds what ``pip install`` of the
course gives a learner whose kernel has that PyTorch: pyproject.toml's ``dependencies``, torch replaced by
``torch==<version>``, the others at constraints.txt's pins (numpy 2.4.6 beside torch 2.5.0, as pip would pick it), and
:data:`TEST_TOOLS`. The course itself is not installed: its checkout goes on ``PYTHONPATH``, so nothing is written into
the repository.

A venv is reused while its key (the Python, the version and the requirement lines) is the one it was built for, and
rebuilt when pyproject.toml's dependencies or constraints.txt change. It is built beside its place and renamed into it
when complete, under a lock, so an interrupted build is never taken for a venv and two test runs build it once.

PyPI is asked directly (``PIP_CONFIG_FILE=/dev/null``, ``PIP_FIND_LINKS`` etc. dropped), whatever the machine's pip
configuration says: a machine that caps torch's version or has a local index must not choose the version tested. On
Linux x86-64 PyPI has only CUDA builds of torch, with their nvidia-* wheels: about 5 GB per venv, 60 s to install here.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST_TOOLS = ["pytest", "ipykernel", "nbval"]
"""Installed too, at the lock's pins: pytest runs the tests there, nbval runs the notebooks in an ipykernel."""
KEY_FILE = ".tinylm-venv-key"
"""Written last into a complete venv: the key it was built for."""


def cache_dir() -> Path:
    """Where the venvs live: ``$XDG_CACHE_HOME/tinylm-course`` (else ``~/.cache/tinylm-course``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tinylm-course"


def requirements(version: str) -> tuple[list[str], list[str]]:
    """The requirements to install beside ``torch==version`` and the constraints (lines of constraints.txt) to pin
    them with, torch's own pin left out."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = [f"torch=={version}", *(r for r in project["dependencies"] if not _names(r, "torch")), *TEST_TOOLS]
    constraints = [line for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
                   if line.split("#")[0].strip() and not _names(line, "torch")]
    return reqs, constraints


def _names(requirement: str, name: str) -> bool:
    """Whether ``requirement`` (a requirement or constraint line) is about the package ``name``."""
    head = requirement.split(";")[0].split("#")[0].strip().lower()
    for sep in "=<>!~[ ":
        head = head.split(sep)[0]
    return head == name


def key(version: str) -> str:
    """What a venv for ``version`` must have been built from: Python's version and the requirement lines."""
    reqs, constraints = requirements(version)
    text = json.dumps({"python": sys.version, "requirements": reqs, "constraints": constraints})
    return hashlib.sha256(text.encode()).hexdigest()


def pip_env() -> dict[str, str]:
    """The environment for pip: this machine's pip configuration and index settings dropped, PyPI asked directly."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") or k in ("PIP_CERT", "PIP_DEFAULT_TIMEOUT")}
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def venv(version: str, log=None) -> Path:
    """The folder of a complete venv with ``torch==version``: found, or built now (about a minute and 5 GB).

    Raises:
        subprocess.CalledProcessError: venv or pip failed (pip's output went to ``log``, or to stderr).
    """
    place = cache_dir() / f"torch-{version}"
    place.parent.mkdir(parents=True, exist_ok=True)
    wanted = key(version)
    with open(place.parent / f"torch-{version}.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another test run building the same venv: wait for it, then reuse it
        marker = place / KEY_FILE
        if marker.is_file() and marker.read_text(encoding="utf-8") == wanted:
            return place
        building = Path(tempfile.mkdtemp(prefix=f"torch-{version}.building-", dir=place.parent))
        try:
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(building)], check=True)
            reqs, constraints = requirements(version)
            pins = building / "constraints.txt"
            pins.write_text("\n".join(constraints) + "\n", encoding="utf-8")
            # --prefer-binary: every pinned package and torch's dependencies have wheels; jieba and mplfonts' fontmeta
            # are pure-Python sdists. --no-compile: the tests import a small part of torch.
            subprocess.run([str(building / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-cache-dir",
                            "--prefer-binary", "--no-compile", "-c", str(pins), *reqs],
                           check=True, env=pip_env(), stdout=log, stderr=subprocess.STDOUT if log else None)
            (building / KEY_FILE).write_text(wanted, encoding="utf-8")
            shutil.rmtree(place, ignore_errors=True)
            building.rename(place)  # a venv moves: bin/python links to the base Python, site-packages is relative
        finally:
            shutil.rmtree(building, ignore_errors=True)
    return place


if __name__ == "__main__":
    for v in sys.argv[1:]:
        print(venv(v))
