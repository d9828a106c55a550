"""Grading the TinyLM course with nbgrader, safely: what runs on the instructor's side.

``sandbox`` (the kernel manager that puts every autograded notebook's kernel in a bubblewrap sandbox),
``limits`` (its launcher: memory, process and CPU limits) and ``kernel`` (a kernel client that does not
stall after widget output), ``remote`` (verdicts computed outside the learner's kernel, through ``tinylm_checks.agent``), ``checkservice`` (the
same, for a learner's check calls when the learner's environment holds no answers) and ``preprocessors``.
``nbgrader_config.py`` wires them; docs/grading.md explains them. The agent runs in a learner's kernel, sent as
source with ``tinylm_checks.probes`` (the stub model and spy optimizer some checks hand to learner code); both
import only torch.
"""
