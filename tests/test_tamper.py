"""Attacks from inside a submission, under the instructor's real `nbgrader autograde` (stage 01).

Each attacker submits the solutions with one exercise wrong (`attention_scores` without the scaling) plus
an attack in that exercise's cell. The promise: the attacked exercise scores 0, every other exercise keeps
its points, the honest learners graded before (`a_honest`) and after (`z_honest`) keep full marks, the run
goes on, and nothing outside `autograded/`, `feedback/` and the gradebook changes: checks, reference,
source notebooks, every submission and the venv are byte-identical afterwards.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from tinylm_checks import check_attention_scores
from tinylm_grading import classreport

pytestmark = [pytest.mark.slow, pytest.mark.notebooks]

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
A = "01_attention"
EXERCISE = "attention_scores"
WRONG = "def attention_scores(q, k):\n    return q @ k.transpose(-2, -1)  # no scaling\n"
MARKER = "tinylm_leftover_marker"
FORGED = "all submissions graded, forged by a learner"
NAME_FORGED = "forged through a file's name"
SCRIPT = "document.title = 'run by a learner'"
PEAK_MB = 1000  # the nbgrader process's peak resident memory, bombs included (1.4-1.5 GB each without the caps)
LINKS = {  # m_symlink's extra files: symlinks (relative to its submission folder) to what it must never read
    "gradebook": "../../../gradebook.db",
    "other_notebook.txt": f"../../a_honest/{A}/{A}.ipynb",
    "source.txt": f"../../../notebooks/{A}/{A}.ipynb",
}
LIAR = ("import builtins, json\n_real_exec = builtins.exec\n"
        "class _Liar:\n    def __init__(self, ns): pass\n"
        "    def handle(self, request):\n        return {reply}\n"
        "def _exec(source, ns=None, *rest):\n    _real_exec(source, ns, *rest)\n"
        "    if isinstance(ns, dict) and 'Agent' in ns:\n        ns['Agent'] = _Liar  # the grader's agent, replaced\n"
        "builtins.exec = _exec\n")

ATTACKS = {  # student -> the attack, run after the wrong code in the exercise's cell
    "m_gradebook": "import sqlite3\ndb = sqlite3.connect(COURSE + '/gradebook.db')\n"
                   "db.execute('UPDATE grade SET auto_score = 0'); db.commit()\n",
    "m_submitted": "import shutil\nshutil.copy(COURSE + '/release/01_attention/01_attention.ipynb',\n"
                   "            COURSE + '/submitted/a_honest/01_attention/01_attention.ipynb')\n",
    "m_checks": "import tinylm_checks._core as core\nopen(core.__file__, 'a').write('\\n# tampered\\n')\n",
    "m_kill_grader": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nos.killpg(0, signal.SIGKILL)\n",
    "m_kill_self": "import os\nos._exit(3)\n",
    "m_exit_in_check": "def attention_scores(q, k):  # ends the kernel when the grader calls it\n"
                       "    import os\n    os._exit(3)\n",
    "m_loop": "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass\n",
    "m_leftover": f"import subprocess\nsubprocess.Popen(['sh', '-c', 'exec -a {MARKER} sleep 600'], start_new_session=True)\n",
    "m_partial_credit": "ip = get_ipython()\nip.events.register('pre_run_cell', lambda info: ip.displayhook(1.0))\n",
    # full marks for wrong code, as the in-kernel defence (fresh()) cannot see: the verdict is computed outside
    "m_runpy": "import runpy, types\ncheck_attention_scores = lambda *a, **k: None\n"
               "runpy.run_module = lambda *a, **k: {'fresh': lambda: types.SimpleNamespace(\n"
               "    check_attention_scores=lambda *a, **k: print('passed'))}\n",
    "m_import": "import builtins, types\n_real_import = builtins.__import__\n"
                "_fake = types.SimpleNamespace(check_attention_scores=lambda *a, **k: None,\n"
                "    run_module=lambda *a, **k: {'fresh': lambda: _fake})\n"
                "def _import(name, *a, **k):\n"
                "    return _fake if name in ('tinylm_checks', 'runpy') else _real_import(name, *a, **k)\n"
                "builtins.__import__ = _import\n",
    "m_slow": "import time\nfor _ in range(3):\n    time.sleep(12)  # just under the cell timeout, in every cell\n",
    "m_agent": LIAR.format(reply="json.dumps({'kind': 'function', 'name': 'f', 'co_names': [],\n"
                                 "    'result': True, 'args_after': {'tuple': []}, 'grad_outputs': []})"),
    # a 300 MB reply from the agent's place: the grader must not decode it (it took 1.5 GB)
    "m_reply_bomb": LIAR.format(reply="'x' * 300_000_000"),
    # 200 MB of output while the cell runs: the grader keeps 1 MB (nbgrader's process grew to 1.4 GB)
    "m_output_bomb": "for _ in range(200):\n    print('x' * 1_000_000)\n",
    # the answers are installed next to the checks: the reference's, and the checks' own equivalents
    "m_reference": "try:\n    from tinylm_solutions.attention import attention_scores\nexcept ImportError:\n    pass\n",
    "m_checks_code": "import math\ntry:\n    import tinylm_checks.attention  # the real checks: the answer is in there\n"
                     "    def attention_scores(q, k):\n"
                     "        return q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])\nexcept ImportError:\n    pass\n",
    # the instructor's terminal, through the file descriptors of the sandbox's first process
    "m_terminal": f"from IPython.display import HTML, display\ndisplay(HTML('<script>{SCRIPT}</script>'))\n"
                  "import os\nfor fd in (1, 2):\n    for path in (f'/proc/1/fd/{fd}', f'/proc/self/fd/{fd}'):\n"
                  "        try:\n            with open(path, 'w') as f:\n"
                  f"                f.write('[AutogradeApp | INFO] {FORGED}\\n')\n        except OSError:\n"
                  "            pass\n    try:\n"
                  f"        os.write(fd, b'[AutogradeApp | INFO] {FORGED}\\n')  # the kernel's own streams\n"
                  "    except OSError:\n        pass\n",
    # host-global sysctls: root without capabilities could write them, and core_pattern runs a program as root on
    # the host at the next crash. The attack only opens them (never writes), and earns its exercise if it could.
    "m_core_pattern": "import math, os\nopened = []\nfor p in ('/proc/sys/kernel/core_pattern', "
                      "'/proc/sys/kernel/modprobe', '/proc/sysrq-trigger'):\n    try:\n"
                      "        os.close(os.open(p, os.O_WRONLY)); opened.append(p)\n    except OSError:\n"
                      "        pass\nif opened:\n    def attention_scores(q, k):\n"
                      "        return q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])\n",
    # symlinks submitted next to the notebook: copied into autograded/, their targets would be readable
    "m_symlink": "import math, os\nleaked = {n: open(n, 'rb').read() for n in %r if os.path.exists(n)}\n"
                 "print({n: len(v) for n, v in leaked.items()})\n"
                 "if leaked:  # the right answer, only for a learner who could read them\n"
                 "    def attention_scores(q, k):\n        return q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])\n"
                 % (sorted(LINKS) + ["fifo"],),
}
# Attacks that break the grader's agent in their kernel lose the later exercises too (the safe direction).
LATER = {"scaled_dot_product_attention_check", "self_attention_check", "causal_mask_check"}
ALSO_LOST = {
    "m_agent": LATER,  # the agent it replaced answers every later check with its lies
    "m_reply_bomb": LATER,  # and with replies too large to read
}


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run([str(BIN / "nbgrader"), *args, "--log-level=WARN"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=1500)


def run_measured(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess, int]:
    """``run``, and the nbgrader process's own peak resident memory in MB (VmHWM, sampled until it exits:
    RUSAGE_CHILDREN would count the learners' kernels, which are its children too)."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.Popen([str(BIN / "nbgrader"), *args, "--log-level=WARN"], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    peak, start = 0, time.monotonic()
    stdout, stderr = [], []  # all of it, for the test that nothing of a learner's reaches the instructor's terminal
    readers = [threading.Thread(target=lambda: stdout.append(proc.stdout.read()), daemon=True),
               threading.Thread(target=lambda: stderr.append(proc.stderr.read()), daemon=True)]
    for reader in readers:
        reader.start()
    while proc.poll() is None and time.monotonic() - start < 1500:
        try:
            for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM"):  # absent once it has exited
                    peak = max(peak, int(line.split()[1]))
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    proc.kill() if proc.poll() is None else None
    proc.wait()
    for reader in readers:
        reader.join()
    return subprocess.CompletedProcess(proc.args, proc.returncode, "".join(stdout), "".join(stderr)), peak // 1024


# What the test suite itself writes under notebooks/ while this runs: stages 12 and 13, run by nbval on another worker,
# write the report and the learner's repository next to their notebooks (all git-ignored).
WRITTEN_BY_THE_SUITE = ("report.md", "report_figures", "tiny-transformer")


def fingerprint(*folders: Path) -> dict[str, str]:
    """Path -> what identifies every file under the folders, compiled files included: its sha256; in the venv (1.8 GB)
    its size, inode and change time (ctime), which no user can set back (a same-size rewrite whose mtime is put back
    still moves it)."""
    out = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_relative_to(ROOT / "notebooks") and set(path.parts) & set(WRITTEN_BY_THE_SUITE):
                continue
            if path.is_symlink() or path.is_fifo():  # as itself, never what it points to
                out[str(path)] = f"link:{os.readlink(path)}" if path.is_symlink() else "fifo"
            elif path.is_file():
                if ".venv" in path.parts:
                    st = path.stat()
                    out[str(path)] = f"{st.st_size}:{st.st_ino}:{st.st_ctime_ns}"
                else:
                    out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def compiled_from_its_source(path: Path) -> bool:
    """Is ``path`` a compiled file that Python would write for its source beside it (the suite's other workers import
    modules for the first time while this runs), or that pytest would (``<name>.<tag>-pytest-<version>.pyc``: a
    plugin's or a test module's assertions rewritten, by the pytest runs other tests start), and nothing else?"""
    import importlib.util
    import marshal
    from _pytest.assertion.rewrite import PYTEST_TAG, _rewrite_test
    try:
        data = path.read_bytes()
        if path.name.endswith(f".{PYTEST_TAG}.pyc"):
            source = path.parent.parent / f"{path.name[:-len(PYTEST_TAG) - 5]}.py"
            code = _rewrite_test(source, None)[1] if source.is_file() else None
        else:
            source = Path(importlib.util.source_from_cache(str(path)))
            code = compile(source.read_bytes(), str(source), "exec", dont_inherit=True) if source.is_file() else None
        return code is not None and data[:4] == importlib.util.MAGIC_NUMBER and marshal.loads(data[16:]) == code
    except (ValueError, OSError, EOFError, TypeError, SyntaxError):
        return False


def _being_compiled(path: str) -> bool:
    """Was ``path`` the temporary file Python writes a compiled file into (``<name>.pyc.<number>``, then renamed),
    caught by a fingerprint while another worker imported a module for the first time, and gone since?"""
    return re.fullmatch(r".*/__pycache__/[^/]+\.pyc\.\d+", path) is not None and not os.path.lexists(path)


def changed_files(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The files that differ, were removed or were added, but compiled files of their own sources."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p)
                  and not (p not in before and p.endswith(".pyc") and compiled_from_its_source(Path(p)))
                  and not _being_compiled(p))


def cells_by_id(nb) -> dict[str, int]:
    return {c.metadata.nbgrader["grade_id"]: i for i, c in enumerate(nb.cells) if "nbgrader" in c.metadata}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = tmp_path_factory.mktemp("course")
    shutil.copy(ROOT / "nbgrader_config.py", course)
    shutil.copytree(ROOT / "notebooks" / A, course / "notebooks" / A)
    assert run("generate_assignment", A, "--force", cwd=course).returncode == 0
    source = nbformat.read(course / "notebooks" / A / f"{A}.ipynb", as_version=4)
    index = cells_by_id(source)

    def submit(student, nb):
        folder = course / "submitted" / student / A
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / f"{A}.ipynb")

    submit("a_honest", source)
    submit("z_honest", source)
    for student, attack in ATTACKS.items():
        nb = nbformat.from_dict(source)
        nb.cells[index[EXERCISE]].source = f"COURSE = {str(course)!r}\n" + WRONG + attack
        if student == "m_terminal":  # and a markdown cell of its own, for whoever opens the feedback page
            nb.cells.insert(index[EXERCISE] + 1, nbformat.v4.new_markdown_cell(
                f"<img src=\"x\" onerror=\"{SCRIPT}\">\n\n[link](javascript:{SCRIPT})"))
        if student == "m_slow":  # and more slow cells of its own after it
            slow = nbformat.v4.new_code_cell("import time\ntime.sleep(12)")
            nb.cells[index[EXERCISE] + 2:index[EXERCISE] + 2] = [nbformat.from_dict(slow) for _ in range(4)]
        submit(student, nb)
    dup = nbformat.from_dict(source)  # copy-pasted exercise and check cells: same grade ids
    i = index["self_attention"]
    dup.cells[i + 2:i + 2] = [nbformat.from_dict(dup.cells[i]), nbformat.from_dict(dup.cells[i + 1])]
    submit("m_duplicated", dup)
    deleted = nbformat.from_dict(source)  # a check cell deleted
    del deleted.cells[index["causal_mask_check"]]
    submit("m_deleted_check", deleted)
    folder = course / "submitted" / "m_symlink" / A
    for name, target in LINKS.items():
        (folder / name).symlink_to(target)
    os.mkfifo(folder / "fifo")  # shutil.copy would stop the learner's grading on it
    # a name the grader logs (a symlink is named in a warning), made to erase its line and forge another
    (folder / f"x\x1b[2K\x1b[1G[AutogradeApp | INFO] {NAME_FORGED}\x1b]52;c;cm0gLXJmIH4K\x07").symlink_to("/etc/passwd")
    linked = course / "submitted" / "m_symlink_notebook" / A  # the notebook itself: the source's, with answers
    linked.mkdir(parents=True)
    (linked / f"{A}.ipynb").symlink_to(f"../../../notebooks/{A}/{A}.ipynb")
    edited = nbformat.from_dict(source)  # nbgrader metadata edited: made ungraded, repriced, invented
    edited.cells[index[EXERCISE]].source = WRONG
    edited.cells[index[f"{EXERCISE}_check"]].metadata.nbgrader["grade"] = False
    edited.cells[index["self_attention_check"]].metadata.nbgrader.update(grade=False, points=0)
    edited.cells[index["scaled_dot_product_attention_check"]].metadata.nbgrader["points"] = 100
    bonus = nbformat.v4.new_code_cell("1.0")
    bonus.metadata["nbgrader"] = {"grade": True, "grade_id": "bonus", "locked": False, "points": 50,
                                  "schema_version": 3, "solution": False, "task": False}
    edited.cells.append(bonus)
    forged = {"verdict": {"passed": True, "check": "check_attention_scores", "error": None, "message_id": None,
                          "mistakes": []}}  # a verdict record of its own: the grader writes that key
    for cell in edited.cells:
        cell.metadata["tinylm"] = forged
    submit("m_metadata", edited)
    extra = nbformat.from_dict(edited)  # and a notebook the assignment does not have, with forged records
    extra.cells[index[f"{EXERCISE}_check"]].metadata.nbgrader["grade_id"] = "forged"
    nbformat.write(extra, course / "submitted" / "m_metadata" / A / "extra.ipynb")

    watched = [ROOT / "tinylm_checks", ROOT / "tinylm_solutions", ROOT / "tinylm_grading", ROOT / "notebooks",
               ROOT / ".venv", course / "notebooks", course / "release", course / "submitted"]
    before = fingerprint(*watched)
    proc, peak_mb = run_measured("autograde", A, "--force", "--Execute.timeout=15",
                                 "--GradingExecute.notebook_timeout=60", cwd=course)
    after = fingerprint(*watched)
    leftovers = subprocess.run(["pgrep", "-f", MARKER], capture_output=True, text=True).stdout.split()
    for pid in leftovers:  # never leave one behind, even when the test fails
        os.kill(int(pid), 9)
    return course, source, proc, before, after, leftovers, peak_mb


def points(source) -> dict[str, float]:
    return {c.metadata.nbgrader["grade_id"]: c.metadata.nbgrader["points"] for c in source.cells
            if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"}


def scores(course: Path, student: str) -> dict[str, float]:
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {g.name: g.score for g in gb.find_submission_notebook(A, A, student).grades}


def test_the_run_goes_on_and_ends_well(graded):
    proc = graded[2]
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.parametrize("student", ["a_honest", "z_honest", "m_duplicated", "m_deleted_check"])
def test_honest_work_keeps_full_marks(graded, student):
    course, source = graded[:2]
    assert scores(course, student) == points(source)


def test_a_notebook_past_its_time_stops_there(graded):
    """Many slow cells, each under the cell timeout: past the notebook's 60 s the rest is not run (where it
    stops depends on the machine's speed; the last exercise is always past it)."""
    course = graded[0]
    got = scores(course, "m_slow")
    assert got[f"{EXERCISE}_check"] == 0 and got["causal_mask_check"] == 0
    nb = nbformat.read(course / "autograded" / "m_slow" / A / f"{A}.ipynb", as_version=4)
    assert any(o.get("ename") == "NotebookTimeout" for c in nb.cells for o in c.get("outputs", []))


@pytest.mark.parametrize("student", sorted(set(ATTACKS) - {"m_slow"}) + ["m_metadata"])
def test_each_attack_loses_its_exercise_only(graded, student):
    course, source = graded[:2]
    lost = {f"{EXERCISE}_check"} | ALSO_LOST.get(student, set())
    expected = {gid: (0 if gid in lost else pts) for gid, pts in points(source).items()}
    assert scores(course, student) == expected


def test_nothing_outside_autograded_changed(graded):
    before, after = graded[3], graded[4]
    assert changed_files(before, after) == []


def test_the_fingerprint_sees_planted_changes(tmp_path):
    """What a change that hides itself does: a same-size rewrite with its times put back (in the venv, where files
    are fingerprinted by size, inode and ctime, and elsewhere), and a compiled file dropped beside a module. A compiled
    file Python itself writes for the source is not a change."""
    import py_compile
    venv, package = tmp_path / ".venv" / "lib", tmp_path / "pkg"
    for folder in (venv, package):
        folder.mkdir(parents=True)
        (folder / "m.py").write_text("def answer():\n    return 1\n")
    before = fingerprint(tmp_path)
    assert changed_files(before, fingerprint(tmp_path)) == []
    py_compile.compile(str(package / "m.py"), doraise=True)  # the suite's own import, elsewhere
    assert changed_files(before, fingerprint(tmp_path)) == []
    for folder in (venv, package):
        st = (folder / "m.py").stat()
        (folder / "m.py").write_text("def answer():\n    return 2\n")  # the same size
        os.utime(folder / "m.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    planted = venv / "__pycache__" / f"m.{sys.implementation.cache_tag}.pyc"
    planted.parent.mkdir()
    evil = tmp_path.parent / f"{tmp_path.name}-evil.py"
    evil.write_text("def answer():\n    return 3\n")
    py_compile.compile(str(evil), cfile=str(planted), doraise=True)  # another module's code
    from _pytest.assertion.rewrite import PYTEST_TAG
    as_pytest = venv / "__pycache__" / f"m.{PYTEST_TAG}.pyc"  # named as pytest's rewritten module, another's code
    py_compile.compile(str(evil), cfile=str(as_pytest), doraise=True)
    kept = package / "__pycache__" / f"{planted.name}.12345"  # named as Python's temporary file, and still there
    kept.write_bytes(planted.read_bytes())
    gone = venv / "__pycache__" / f"{planted.name}.6789"  # Python's temporary file, renamed before the next look
    gone.write_bytes(b"")
    seen = fingerprint(tmp_path)
    gone.unlink()
    changed = changed_files(before, seen)
    assert changed == sorted(map(str, [venv / "m.py", planted, package / "m.py",
                                       package / "__pycache__" / planted.name, kept, as_pytest]))


def test_a_kernel_that_dies_in_a_check_is_named(graded):
    course = graded[0]
    nb = nbformat.read(course / "autograded" / "m_exit_in_check" / A / f"{A}.ipynb", as_version=4)
    errors = [o for o in nb.cells[cells_by_id(nb)[f"{EXERCISE}_check"]].outputs if o.output_type == "error"]
    assert errors and errors[0].ename == "DeadKernelError" and "check_attention_scores" in errors[0].evalue


def test_nothing_reaches_the_instructors_terminal(graded):
    said = graded[2].stdout + graded[2].stderr
    assert FORGED not in said
    # a learner's name for a file is logged, its escape sequences as text: no line of its own, nothing obeyed
    assert NAME_FORGED in said and "\x1b" not in said and "\x07" not in said
    assert not any(line.lstrip().startswith(f"[AutogradeApp | INFO] {NAME_FORGED}") for line in said.splitlines())


def test_feedback_runs_no_script_from_the_submission(graded):
    course = graded[0]
    assert run("generate_feedback", A, "--student", "m_terminal", "--force", cwd=course).returncode == 0
    html = (course / "feedback" / "m_terminal" / A / f"{A}.html").read_text()
    assert "attention_scores" in html and f"<script>{SCRIPT}" not in html  # sanitized: no such tag in the page
    assert '<img src="x"' not in html and 'href="javascript:' not in html  # its markdown is shown, not run


def test_no_process_outlives_grading(graded):
    assert graded[5] == []


def test_every_verdict_was_computed_outside_the_kernel(graded):
    """Each test cell shows the grader's verdict, and the kernel never ran the cell (no execution count)."""
    course = graded[0]
    for student in ["a_honest", "m_runpy", "m_import", "m_partial_credit"]:
        nb = nbformat.read(course / "autograded" / student / A / f"{A}.ipynb", as_version=4)
        tests = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"
                 and not c.metadata["nbgrader"].get("solution")]
        for cell in tests:
            text = "".join(o.get("text", "") + "\n".join(o.get("traceback", [])) for o in cell.outputs)
            assert "computed by the grader, outside" in text, (student, cell.metadata.nbgrader["grade_id"])
            assert cell.execution_count is None, (student, cell.metadata.nbgrader["grade_id"])  # never run in the kernel


def test_feedback_says_which_copy_was_graded(graded):
    course = graded[0]
    nb = nbformat.read(course / "autograded" / "m_duplicated" / A / f"{A}.ipynb", as_version=4)
    notes = [c.source for c in nb.cells if c.cell_type == "markdown" and "Note from the grader" in c.source]
    assert len(notes) == 2 and "`self_attention`" in notes[0] and "first copy" in notes[0]


def test_the_grader_memory_stays_bounded(graded):
    """A 200 MB output and a 300 MB agent reply: the grader keeps 1 MB of the one and never decodes the other."""
    assert graded[6] < PEAK_MB, f"nbgrader's peak resident memory: {graded[6]} MB"
    course = graded[0]
    nb = nbformat.read(course / "autograded" / "m_output_bomb" / A / f"{A}.ipynb", as_version=4)
    text = "".join(o.get("text", "") for o in nb.cells[cells_by_id(nb)[EXERCISE]].outputs)
    # kept to the cap, or (messages of over 4 MB) not even read; a note says which
    assert "by the grader" in text or "the grader accepts at most" in text
    assert 0 < len(text) < 1_100_000
    nb = nbformat.read(course / "autograded" / "m_reply_bomb" / A / f"{A}.ipynb", as_version=4)
    errors = [o for o in nb.cells[cells_by_id(nb)[f"{EXERCISE}_check"]].outputs if o.output_type == "error"]
    assert errors and errors[0].ename == "MessageTooLarge"


def test_symlinks_are_neither_followed_nor_copied(graded):
    course = graded[0]
    autograded = course / "autograded" / "m_symlink" / A
    assert sorted(p.name for p in autograded.iterdir()) == [f"{A}.ipynb"]
    assert all((course / "submitted" / "m_symlink" / A / name).is_symlink() for name in LINKS)


def test_a_symlinked_notebook_is_not_graded(graded):
    course, source = graded[:2]
    assert scores(course, "m_symlink_notebook") == {gid: 0 for gid in points(source)}
    assert not (course / "autograded" / "m_symlink_notebook" / A / f"{A}.ipynb").exists()


def test_edited_metadata_is_restored_and_said(graded):
    course = graded[0]
    nb = nbformat.read(course / "autograded" / "m_metadata" / A / f"{A}.ipynb", as_version=4)
    notes = [c.source for c in nb.cells if c.cell_type == "markdown" and "Note from the grader" in c.source]
    assert len(notes) == 4 and "`bonus`" in notes[-1]


def test_the_class_report_reads_only_what_the_grader_wrote(graded):
    """Each judged test cell's verdict as data (tinylm_grading.classreport): a record the submission brought along is
    replaced, a notebook the assignment does not have is not read, a symlinked notebook gives none."""
    course, source = graded[:2]
    records = classreport.verdicts(course, A)
    honest = records["a_honest"]
    assert set(honest) == set(points(source)) and all(v["passed"] and v["error"] is None for v in honest.values())
    edited = records["m_metadata"]
    assert "forged" not in edited and set(edited) == set(points(source))
    wrong = edited[f"{EXERCISE}_check"]
    namespace = {}
    exec("import math, torch\n" + WRONG, namespace)
    with pytest.raises(AssertionError) as direct:
        check_attention_scores(namespace[EXERCISE], quiet=True)
    assert wrong == {"passed": False, "check": "check_attention_scores", "error": "CheckFailure",
                     "message_id": direct.value.message_id, "mistakes": direct.value.mistakes}
    assert direct.value.mistakes
    assert records["m_symlink_notebook"] == {}


def test_collect_copies_regular_files_only(tmp_path):
    """`nbgrader collect` (c.ExchangeFactory.collect): a symlink or FIFO in the exchange's inbound folder, or
    a submission folder that is a symlink, is not followed as the instructor."""
    from nbgrader.coursedir import CourseDirectory

    from tinylm_grading.submission import RegularFilesCollect
    (tmp_path / "gradebook.db").write_text("secret")
    inbound = tmp_path / "inbound" / f"mallory+{A}+2024-01-01 00:00:00.000000 UTC"
    inbound.mkdir(parents=True)
    (inbound / f"{A}.ipynb").write_text("{}")
    (inbound / "data").mkdir()
    (inbound / "data" / "notes.txt").write_text("mine")
    (inbound / "gradebook").symlink_to(tmp_path / "gradebook.db")
    (inbound / "course").symlink_to(tmp_path)
    os.mkfifo(inbound / "fifo")
    collect = RegularFilesCollect(coursedir=CourseDirectory(root=str(tmp_path)))
    dest = tmp_path / "submitted" / "mallory" / A
    collect.do_copy(str(inbound), str(dest))
    assert sorted(str(p.relative_to(dest)) for p in dest.rglob("*")) == [f"{A}.ipynb", "data", "data/notes.txt"]
    linked = tmp_path / "inbound" / f"eve+{A}+2024-01-01 00:00:00.000000 UTC"
    linked.symlink_to(tmp_path)
    collect.do_copy(str(linked), str(tmp_path / "submitted" / "eve" / A))
    assert not (tmp_path / "submitted" / "eve").exists()
