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
    # ---- tinylm-class-report (tinylm_grading.classreport)
    "grading.report.description": ("What a class got wrong: for each exercise of an autograded assignment, how many "
                                   "learners passed and the mistakes the checks named for the others, read from the "
                                   "verdicts the grader recorded in the autograded notebooks."),
    "grading.report.help.assignment": "the assignment (a stage), e.g. 01_attention",
    "grading.report.help.course": "the nbgrader course folder, where gradebook.db is (default: the current folder)",
    "grading.report.help.csv": "also write the table to this CSV file",
    "grading.report.help.plot": "also draw the most common mistakes into this PNG file",
    "grading.report.no_gradebook": "{course} has no gradebook.db: give the nbgrader course folder with --course",
    "grading.report.no_assignment": "the gradebook has no assignment {assignment} (it has: {known})",
    "grading.report.none_graded": ("no submission of {assignment} has been autograded yet: run "
                                   "`nbgrader autograde {assignment}` first"),
    "grading.report.no_folder": "cannot write {path}: its folder does not exist",
    "grading.report.title": "{assignment}: {learners} learners autograded",
    "grading.report.exercise": "exercise",
    "grading.report.passed": "passed",
    "grading.report.mistakes": "the most common mistakes (learners, share of the class)",
    "grading.report.unnamed": "a failure the check names no mistake for",
    "grading.report.written": "written: {path}",
    "grading.report.plot_title": "{assignment}: the most common mistakes",
    "grading.report.plot_x": "share of the learners",
    # ---- tinylm-autograde (tinylm_grading.autograde)
    "grading.autograde.description": ("Autograde learners' submissions with several workers at once: nbgrader "
                                      "autograde for each learner and stage, with the course's nbgrader_config.py."),
    "grading.autograde.help.stages": "the assignments (stages) to grade, e.g. 01_attention",
    "grading.autograde.help.workers": ("how many learners to grade at once (default: 1); more than 1 needs a "
                                       "PostgreSQL gradebook"),
    "grading.autograde.help.student": ("grade only this learner (repeat for more; default: every learner who "
                                       "submitted)"),
    "grading.autograde.help.course": ("the nbgrader course folder, where nbgrader_config.py is (default: the current "
                                      "folder)"),
    "grading.autograde.help.force": "grade again a submission that has been autograded already (nbgrader's --force)",
    "grading.autograde.no_course": ("{course} has no nbgrader_config.py: give the nbgrader course folder with "
                                    "--course"),
    "grading.autograde.no_submissions": "nobody has submitted {stage}: there is no folder {folder}",
    "grading.autograde.no_student": "no submission of these stages from: {students}",
    "grading.autograde.no_gradebook": "cannot open the gradebook {url}: {error}",
    "grading.autograde.bad_workers": "--workers must be 1 or more, not {workers}",
    "grading.autograde.one_writer": ("{workers} workers need a gradebook that takes concurrent writers: this course's "
                                     "is SQLite, which takes one; use --workers 1, or a PostgreSQL gradebook "
                                     "(TINYLM_GRADEBOOK=postgresql://...)"),
    "grading.autograde.done": "{stage} {student}: graded in {seconds} s",
    "grading.autograde.failed": "{stage} {student}: nbgrader autograde failed (exit status {code}) after {seconds} s",
    "grading.autograde.output": "---- the end of nbgrader's output for {stage} {student}:",
    "grading.autograde.summary": "{commands} autogrades in {seconds} s, {workers} at a time; {failed} failed",
    # ---- tinylm-check-service (tinylm_grading.checkservice)
    "grading.service.description": ("Run the course's checks for learners whose environment holds no answers (make "
                                    "learner-env): their check calls reach it through its socket."),
    "grading.service.help.socket": ("where to listen: a Unix socket's path, or tcp://HOST:PORT (default: ${env}, else "
                                    "{default})"),
    "grading.service.help.released": ("answer only the checks of the stages up to this one, the latest released to "
                                      "learners (default: all)"),
    "grading.service.ready": "the check service answers at {path} (pid {pid}); stop it with: kill {pid}",
    "grading.service.running": "a check service already answers at {path}",
    # ---- make class (tinylm_grading.hubclass)
    "grading.class.description": "A demo class on JupyterHub, on 127.0.0.1:{port}: an instructor and learners.",
    "grading.class.help.root": "the class folder (default: {default})",
    "grading.class.help.learners": "how many learners (default: {default})",
    "grading.class.help.released": "the latest stage learners may see (default: {default})",
    "grading.class.needs_root": "needs root (it creates the learners' Unix users and runs their servers as them)",
    "grading.class.needs_npm": "needs npm, for JupyterHub's proxy (Debian: apt-get install npm)",
    "grading.class.ready": "the class is at {url} (hub log: {log})",
    "grading.class.closed": "the course folder {folder} is no longer readable by other users (chmod o-rwx)",
    "grading.class.instructor": "instructor",
    "grading.class.learner": "learner",
    "grading.class.password": "password",
    "grading.class.stop": "Ctrl-C stops it",
}
