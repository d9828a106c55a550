"""The grader's notes in a learner's feedback (``tinylm_grading.preprocessors``), in the notebook's language."""

MESSAGES = {
    "grading.duplicate_note": ("**Note from the grader:** the cell above is a copy of `{grade_id}` (same grade id). It "
                               "ran as ordinary code; `{grade_id}` was graded on its first copy."),
    "grading.restored_note": ("**Note from the grader:** the nbgrader metadata of the cell above (`{grade_id}`: "
                              "{changes}) had been edited; it was graded with the course's metadata."),
    "grading.stripped_note": ("**Note from the grader:** the cell above was marked as an nbgrader cell (`{grade_id}`) "
                              "that this assignment does not have; it ran as ordinary code and is not graded."),
    "grading.notebook_timeout": "grading of this notebook stopped after {seconds} s in all; this cell was not run",
    "grading.not_interrupted": ("the cell could not be interrupted; it was stopped, and the cells before it were run "
                                "again in a new kernel"),
    "grading.past_time_limit": ("the cell ran past the time limit and could not be interrupted; the cells before it "
                                "were run again in a new kernel"),
    "grading.kernel_died": "the kernel ended while running this cell; the cells before it were run again in a new kernel",
}
