"""Stage 00: the environment's check (``tinylm_checks.environment``), which runs in the learner's own kernel."""

MESSAGES = {
    "environment.wrong_torch": {
        "problem": "PyTorch {installed} is installed, the course pins {pinned}",
        "hint": "start JupyterLab with `make lab` from the course folder (it uses the course's .venv)",
    },
    "environment.passed": "PyTorch {pinned} on {threads} CPU threads",
    "environment.python": "python",
    "environment.torch": "torch",
    "environment.threads": "cpu threads (torch)",
    "environment.cores": "cpu cores (os)",
    "environment.executable": "executable",
}
