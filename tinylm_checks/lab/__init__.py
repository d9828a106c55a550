"""The learner's tools, apart from the checks: figures (``plots``), the claims lab's predictions (``claims``), the overfit lab's setups (``overfit``), the capstone's files (``repository``), interactive views (``widgets``) and the
records of a learner's runs (``runs``). They draw or keep what a notebook computed and judge nothing, so
they are the same in a learner's kernel and in autograding's sandbox (whose stand-in ``tinylm_checks`` holds
this package unchanged). Every public name is also importable from ``tinylm_checks``.
"""
from . import claims, overfit, plots, repository, runs, unfinished, widgets
from .claims import *  # noqa: F401,F403
from .overfit import *  # noqa: F401,F403
from .repository import *  # noqa: F401,F403
from .plots import *  # noqa: F401,F403
from .runs import *  # noqa: F401,F403
from .widgets import *  # noqa: F401,F403

__all__ = [*claims.__all__, *overfit.__all__, *repository.__all__, *plots.__all__, *widgets.__all__, *runs.__all__]

unfinished.install()
