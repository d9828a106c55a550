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
    "grading.past_time_limit": ("the cell ran past its time limit of {seconds} s and could not be interrupted; the "
                                "cells before it were run again in a new kernel"),
    "grading.kernel_died": "the kernel ended while running this cell; the cells before it were run again in a new kernel",
    "grading.check_timeout": "your code did not finish within {seconds} s while {check} ran it",
    "grading.check_notebook_timeout": ("grading of this notebook ran out of time while {check} ran your code (the "
                                       "{seconds} s that were left)"),
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
    "grading.autograde.help.shards": ("split the learners into this many shards, graded by as many processes at once "
                                      "(a Kubernetes Indexed Job's pods); this process grades one (default: 1); more "
                                      "than 1 needs a PostgreSQL gradebook"),
    "grading.autograde.help.shard": ("which shard this process grades, from 0 (default: ${env}, the index Kubernetes "
                                     "gives each pod of an Indexed Job)"),
    "grading.autograde.no_course": ("{course} has no nbgrader_config.py: give the nbgrader course folder with "
                                    "--course"),
    "grading.autograde.no_submissions": "nobody has submitted {stage}: there is no folder {folder}",
    "grading.autograde.no_student": "no submission of these stages from: {students}",
    "grading.autograde.no_gradebook": "cannot open the gradebook {url}: {error}",
    "grading.autograde.bad_workers": "--workers must be 1 or more, not {workers}",
    "grading.autograde.bad_shards": "--shards must be 1 or more, not {shards}",
    "grading.autograde.bad_shard": ("--shard must be a whole number from 0 to {last} (--shards {shards}), not "
                                    "{shard}; without --shard it is read from ${env}"),
    "grading.autograde.one_writer_shards": ("{shards} shards need a gradebook that takes concurrent writers: this "
                                            "course's is SQLite, which takes one; use a PostgreSQL gradebook "
                                            "(TINYLM_GRADEBOOK=postgresql://...)"),
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
                                      "learners: its name or number (needed)"),
    "grading.service.help.secret": ("over TCP: a file holding the secret the learners' credentials are made from (the "
                                    "hub makes each learner's, and sets it as ${env} in their server)"),
    "grading.service.ready": "the check service answers at {path} (pid {pid}); stop it with: kill {pid}",
    "grading.service.running": "a check service already answers at {path}",
    "grading.service.needs_released": ("give the latest stage released to learners, --released NN (make check-service "
                                       "RELEASED=NN): a later stage's check runs the reference of that stage"),
    "grading.service.needs_secret": ("over TCP, give --secret FILE: the file holding the secret the hub makes the "
                                     "learners' credentials from (docs/kubernetes.md)"),
    "grading.service.no_secret": "the secret file {path} cannot be used: {error}",
    "grading.service.short_secret": "it holds fewer than 16 bytes",
    "grading.service.not_private": ("{folder} is not a private folder of yours ({problem}): another user may have made "
                                    "it, to receive your checks. Remove it, or start the service with TMPDIR set to a "
                                    "folder of yours"),
    "grading.service.no_folder": "the socket's folder {folder} cannot be used: {error}",
    "grading.service.folder_not_yours": ("the socket's folder {folder} belongs to user {owner}, not to you ({uid}): "
                                         "the learners' side trusts a service that runs as the owner of its socket's "
                                         "folder. Put the socket in a folder of yours that learners cannot write"),
    "grading.service.folder_open": ("every user can write in the socket's folder {folder}, so anyone could put their "
                                    "own socket there: use a folder of yours that only you can write (chmod o-w)"),
    "grading.service.course_open": ("warning: other users can read the course folder {folder}, with the reference in "
                                    "it: close it with chmod o-rwx {folder}"),
    "grading.service.not_released": ("{check} is a check of stage {stage}, which this check service does not answer "
                                     "yet: it answers the stages up to {released}"),
    "grading.service.bad_request": "not a request this service answers: {request}",
    "grading.service.log_error": "a connection ended with {error}",
    "grading.service.log_deadline": ("a check of {learner} ran past {seconds} s: it was stopped, and what it left "
                                     "removed"),
    # ---- make learner-env (tinylm_grading.learnerenv)
    "grading.learnerenv.description": ("Build the learners' environment without answers (make learner-env): the "
                                       "pinned libraries, the checks' learner side, the given code of the released "
                                       "stages."),
    "grading.learnerenv.help.venv": ("the learners' venv (created if it does not exist): outside the course folder, "
                                     "where every learner can read it (such as /opt/tinylm-learner)"),
    "grading.learnerenv.help.site": "only write the course's files into this site-packages folder",
    "grading.learnerenv.help.extra": "another package for the venv (repeatable)",
    "grading.learnerenv.help.released": "the latest stage released to learners: its name or number (needed)",
    "grading.learnerenv.one_of": "give one of --venv and --site",
    "grading.learnerenv.needs_released": ("give the latest stage released to learners, --released NN (make "
                                          "learner-env RELEASED=NN)"),
    "grading.learnerenv.inside_course": ("{venv} is inside the course folder {course}, which learners must not read: "
                                         "build it elsewhere (make learner-env LEARNER_VENV=/opt/tinylm-learner)"),
    "grading.learnerenv.not_writable": "cannot create {venv} ({error}): choose another place (LEARNER_VENV=...)",
    "grading.learnerenv.closed": ("warning: {folder} is closed to other users (on the way to {venv}): learners cannot "
                                  "run this environment; build it under a folder every user can enter"),
    "grading.learnerenv.private_python": ("warning: no Python {version} with venv that every user can run (this one is "
                                          "under a folder closed to others): learners cannot run this environment. "
                                          "Install Debian's python3-venv"),
    "grading.learnerenv.written": ("{files} files of the course written; stages up to {released} released; given code: "
                                   "{modules}"),
    "grading.learnerenv.open_with": ("open it with: {venv}/bin/jupyter lab release/ (its checks need: make "
                                     "check-service RELEASED={released})"),
    # ---- make class (tinylm_grading.hubclass)
    "grading.class.description": "A demo class on JupyterHub, on 127.0.0.1:{port}: an instructor and learners.",
    "grading.class.help.root": "the class folder (default: {default})",
    "grading.class.help.learners": "how many learners (default: {default})",
    "grading.class.help.released": "the latest stage learners may see (default: {default})",
    "grading.class.needs_root": "needs root (it creates the learners' Unix users and runs their servers as them)",
    "grading.class.needs_npm": "needs npm, for JupyterHub's proxy (Debian: apt-get install npm)",
    "grading.class.ready": "the class is at {url} (hub log: {log})",
    "grading.class.closed": "the course folder {folder} is no longer readable by other users (chmod o-rwx)",
    "grading.class.exchange_not_yours": ("{folder} is not a folder of yours (it belongs to {owner}): someone may have "
                                         "put it there while the exchange was open to all. See what it holds, move it "
                                         "out of the exchange, and start the class again"),
    "grading.class.instructor": "instructor",
    "grading.class.learner": "learner",
    "grading.class.password": "password",
    "grading.class.stop": "Ctrl-C stops it",
    # ---- the sandbox (tinylm_grading.sandbox)
    "grading.sandbox.not_linux": ("grading runs learners' code in a Linux sandbox (bubblewrap), and this is {platform}: "
                                  "grade on a Linux machine or in a Linux container (on Windows, WSL 2 is one); see "
                                  "docs/grading.md. Learning works here, every check included"),
}
