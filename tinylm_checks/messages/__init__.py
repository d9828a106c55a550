"""The message table of the checks: every sentence a learner reads, by a stable id (see ``tinylm_checks._text``).

One module per stage's checks (``core`` holds what every check shares), each with ``MISTAKES`` (mistake id ->
``(sentence, hint)``) and ``MESSAGES`` (message id -> a text, or a dict of a failure's parts). Only data: no
module here imports anything.
"""
