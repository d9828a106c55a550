"""Stage 00: the environment's check (``tinylm_checks.environment``), which runs in the learner's own kernel."""

MESSAGES = {
    "environment.old_torch": {
        "problem": "PyTorch {installed} is older than the course supports (PyTorch {oldest} or newer; its runs were "
                   "made on {pinned}): upgrade it in a cell with %pip install \"torch>={oldest}\" (or start "
                   "JupyterLab with `make lab`, which uses the course's .venv), then restart the kernel",
    },
    "environment.passed": "PyTorch {installed} on {threads} CPU threads",
    "environment.other_torch": "⚠ the course's runs were made on PyTorch {pinned}, not {installed}: the checks work "
                               "on {installed} (they are tested on {oldest} to {newest}), but the numbers and "
                               "samples the notebooks state from those runs may differ from yours, and a sentence "
                               "about them may not hold: the losses, perplexities, gradient norms and generated "
                               "samples of notebooks 09, 10 and 11, the model answers of notebook 12 that quote "
                               "them, and the example losses of notebook 13. For the course's numbers: "
                               "%pip install \"torch=={pinned}\", then restart the kernel",
    "environment.untested_torch": "⚠ PyTorch {installed} is newer than the course was tested on ({oldest} to "
                                  "{newest}): if a check fails in a way your code cannot explain, try PyTorch "
                                  "{pinned}: %pip install \"torch=={pinned}\", then restart the kernel",
    "environment.python": "python",
    "environment.torch": "torch",
    "environment.threads": "cpu threads (torch)",
    "environment.cores": "cpu cores (os)",
    "environment.executable": "executable",
}
