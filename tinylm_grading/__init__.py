"""Grading the TinyLM course with nbgrader, safely: what runs on the instructor's side.

``sandbox`` (the kernel manager that puts every autograded notebook's kernel in a bubblewrap sandbox),
``limits`` (its launcher: memory, process and CPU limits) and ``kernel`` (a kernel client that does not
stall after widget output), ``remote``/``agent`` (verdicts computed outside the learner's kernel) and
``preprocessors``. ``nbgrader_config.py`` wires them; docs/grading.md explains them. One file of it runs in a
learner's kernel, sent as source: ``agent`` (with ``tinylm_checks.probes``, the stub model and spy optimizer
some checks hand to learner code); both import only torch.
"""
