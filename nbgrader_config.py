"""nbgrader configuration for the TinyLM course (run nbgrader from this folder).

One assignment per stage: notebooks/<stage>/<stage>.ipynb is the source (with solutions and hidden
tests); `nbgrader generate_assignment <stage>` writes the learner version to release/<stage>/.
"""
c = get_config()  # noqa: F821 - provided by nbgrader

c.CourseDirectory.course_id = "tinylm"
c.CourseDirectory.root = __import__("os").path.dirname(__import__("os").path.abspath(__file__))
c.CourseDirectory.source_directory = "notebooks"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
# The gradebook: one SQLite file, or a database that takes concurrent writers for grading with several workers
# (tinylm-autograde --workers 2): TINYLM_GRADEBOOK=postgresql://user@host/db (docs/grading.md).
# A postgresql:// URL is read with psycopg 3, the grading extra's driver, as SQLAlchemy 2.1 reads it: SQLAlchemy 2.0
# would look for psycopg2, which the course does not install.
_gradebook = __import__("os").environ.get("TINYLM_GRADEBOOK", "sqlite:///gradebook.db")
c.CourseDirectory.db_url = ("postgresql+psycopg://" + _gradebook.removeprefix("postgresql://")
                            if _gradebook.startswith("postgresql://") else _gradebook)

# Feedback pages show learners' markdown and outputs: sanitized, so that a <script> in a submission does not
# run in the browser of whoever opens the page (the learner's instructor, say).
c.HTMLExporter.sanitize_html = True
# ... but that cleans outputs only: nbgrader's formgrade and feedback templates render markdown cells without
# it, so a learner's written answer could hold a <script> that runs in the instructor's formgrader, which
# shares an origin with their Jupyter server. Markdown goes through nbconvert's renderer and then bleach
# (tinylm_grading/html.py).
c.HTMLExporter.filters = {"markdown2html": "tinylm_grading.html.markdown2html",
                          "clean_html": "tinylm_grading.html.clean_html"}  # output HTML: nbconvert's keeps id, class
# ... and nbconvert writes output metadata into tags (an image's width held an onerror): outputs keep only numeric
# width/height (InertOutputs, below), each page is cleaned after rendering of what its template did not put there
# (event handlers, javascript: URLs, scripts) and carries a Content-Security-Policy, which the formgrader also sends
# as a header (tinylm_grading/html.py).
c.GenerateFeedback.exporter_class = "tinylm_grading.html.InertHTMLExporter"
__import__("tinylm_grading.html").html.install()  # the formgrader's exporter and header; nothing outside its server

# Files of an assignment's folder that nbgrader does not copy (nbgrader's default list, and one more): stage 13's
# notebook writes the learner's repository, tiny-transformer/, next to itself. Autograding runs the notebook again
# and writes it afresh; a copy from the learner's machine would sit read-only in its place.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "tiny-transformer"]

# The instructor's terminal shows learners' names for things (submitted files, folders in the exchange, student ids,
# what a sandbox wrote): escape sequences in them are shown as text, never obeyed (tinylm_grading/logs.py).
c.Application.logging_config = {"formatters": {"console": {"class": "tinylm_grading.logs.PrintableFormatter"}}}

# What a learner sees in place of a solution.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
# the release's stubs in the notebook's language (a Chinese notebook's are Chinese): nbgrader's ClearSolutions replaced
from nbgrader.converters.generate_assignment import GenerateAssignment  # noqa: E402
from tinylm_grading.preprocessors import ClearSolutions  # noqa: E402

c.GenerateAssignment.preprocessors = [ClearSolutions if cls.__name__ == "ClearSolutions" else cls
                                      for cls in GenerateAssignment.class_traits()["preprocessors"].default()]

# Autograding runs untrusted code: a cell that runs longer than this is interrupted and scored as an
# error, so an infinite loop costs one exercise, not the whole run. The slowest solution cell of the
# course takes a few seconds on 2 CPU cores.
c.Execute.timeout = 120
c.Execute.interrupt_on_timeout = True

# One learner's notebook never stops the others' grading (tinylm_grading/preprocessors.py): edited nbgrader
# metadata (a test cell set to grade: false, changed points, a made-up graded cell) is restored from the
# gradebook, a copy-pasted exercise cell is graded on its first copy (nbgrader's DeduplicateIds would abort
# the run), a deleted test cell is put back from the gradebook, a kernel that dies or cannot be interrupted
# costs the cell it was running (a new kernel replays the cells before it), and a test cell that shows an
# error scores 0.
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    "tinylm_grading.preprocessors.RestoreCellMetadata",
    "tinylm_grading.preprocessors.FirstCopyWins",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "nbgrader.preprocessors.OverwriteCells",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.Autograde.autograde_preprocessors = [
    "tinylm_grading.preprocessors.GradingExecute",
    "tinylm_grading.preprocessors.InertOutputs",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.OverwriteCells.add_missing_cells = True

# A submission's symlinks, FIFOs and devices are neither followed nor copied into autograded/ (nor by collect
# from the exchange): a symlink to the gradebook or to another learner's notebook would be copied where the
# learner's kernel reads it. Only regular files are copied, the others are named in a warning
# (tinylm_grading/submission.py).
__import__("tinylm_grading.submission").submission.install()
c.ExchangeFactory.collect = "tinylm_grading.submission.RegularFilesCollect"
# The instructor's commands work only in an exchange no learner can change under them (the course's folders are the
# instructor's, inbound has the sticky bit, which release sets): a learner who put their own course folder in the
# exchange got the classmates' submissions, and root's release_feedback wrote through their symlink
# (tinylm_grading/submission.py, docs/grading.md).
c.ExchangeFactory.release_assignment = "tinylm_grading.submission.TrustedReleaseAssignment"
c.ExchangeFactory.release_feedback = "tinylm_grading.submission.TrustedReleaseFeedback"

# Every autograded notebook's kernel runs in a bubblewrap sandbox: read-only files, a scratch copy of the
# submission's folder, no view of the gradebook, other submissions, the source notebooks or the exchange,
# its own PID and network namespaces, limits on memory, processes and CPU (tinylm_grading/sandbox.py,
# docs/grading.md). Its client also polls in short slices, so that widget output (stage 04's explorer)
# does not stall nbclient for a whole timeout (tinylm_grading/kernel.py).
c.Execute.kernel_manager_class = "tinylm_grading.sandbox.SandboxKernelManager"
# For a trusted, single-user context only (your own notebooks on your own machine):
# c.SandboxKernelManager.sandbox = False
# The exchange (nbgrader's release/fetch/submit/collect): nbgrader's default, or the demo class's (make class).
if __import__("os").environ.get("TINYLM_EXCHANGE"):
    c.Exchange.root = __import__("os").environ["TINYLM_EXCHANGE"]
