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
c.CourseDirectory.db_url = "sqlite:///gradebook.db"

# What a learner sees in place of a solution.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Autograding runs untrusted code: a cell that runs longer than this is interrupted and scored as an
# error, so an infinite loop costs one exercise, not the whole run. The slowest solution cell of the
# course takes a few seconds on 2 CPU cores.
c.Execute.timeout = 120
c.Execute.interrupt_on_timeout = True

# nbclient sometimes misses a cell's execute_reply after ipywidgets output (stage 04's explorer) and waits
# for the whole timeout; this kernel manager's client polls in short slices instead (tinylm_checks/kernel.py).
c.Execute.kernel_manager_class = "tinylm_checks.kernel.SlicedPollKernelManager"
