"""tinylm_grading.forkbox: a root grader's capstone commands, each forked from a server that imported PyTorch once into a
sandbox of its own. Contained as bubblewrap's (tests/test_sandbox.py runs its probe on this path), and nothing one
command leaves reaches the next: the red team's channels (a process, an abstract socket, TCP state, SysV IPC, files in
/tmp and /dev/shm, the PID and inode counters, the server's own /proc entry)."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tinylm_grading import forkbox, sandbox, workspace

pytestmark = pytest.mark.skipif(not forkbox.is_usable(), reason="a root grader on Linux: the suite runs as root in CI")
ROOT = Path(__file__).resolve().parent.parent

LEAVE = r'''
import ctypes, json, os, signal, socket, subprocess, sys, time
report = {"child_pid": int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                                           text=True).stdout)}
# a daemon that leaves the command's group and asks for no signal when its parent dies
first = os.fork()
if first == 0:
    os.setsid()
    if os.fork() == 0:
        ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)
        s = socket.socket(socket.AF_UNIX)
        s.bind("\0tinylm-leak")
        s.listen()
        time.sleep(600)
    os._exit(0)
os.waitpid(first, 0)
time.sleep(0.3)
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", 47001))
server.listen()
client = socket.create_connection(("127.0.0.1", 47001))
conn, _ = server.accept()
client.close()
conn.close()  # TIME_WAIT on one side
for folder in ("/tmp", "/dev/shm"):
    open(f"{folder}/leak", "w").write("x")
libc = ctypes.CDLL(None, use_errno=True)
report["shm"] = libc.shmget(0x7EA1, 4096, 0o1666)  # IPC_CREAT | 0666
report["inode"] = os.stat("/tmp/leak").st_ino
report["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print(json.dumps(report))
'''

FIND = r'''
import ctypes, json, os, socket, subprocess, sys
report = {"pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("\0tinylm-leak")
    report["abstract"] = "connected"
except OSError as e:
    report["abstract"] = type(e).__name__
report["tcp"] = [line.split()[1:4] for line in open("/proc/net/tcp").read().splitlines()[1:]]
report["files"] = sorted(os.listdir("/tmp") + os.listdir("/dev/shm"))
report["sysvipc"] = open("/proc/sysvipc/shm").read().splitlines()[1:]
report["child_pid"] = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                                         text=True).stdout)
open("/tmp/leak", "w").close()
report["inode"] = os.stat("/tmp/leak").st_ino
os.remove("/tmp/leak")
report["modules"] = sorted(m for m in sys.modules if m.startswith("tinylm") and "." not in m)
report["preloaded"] = "torch" in sys.modules
import tinylm_checks
report["standin"] = hasattr(tinylm_checks, "NOTE")  # the stand-in's: the checks stay outside
try:
    import tinylm_solutions.capstone
    report["answers"] = "imported"
except ImportError as e:
    report["answers"] = "ImportError"
print(json.dumps(report))
'''


def _learner_processes(uid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and entry.stat().st_uid == uid:
                pids.append(int(entry.name))
        except OSError:
            pass
    return pids


def _last_json(output: str) -> dict:
    return json.loads(output.strip().splitlines()[-1])


@pytest.fixture
def forked(monkeypatch):
    """That the commands went the forked way: the calls of SandboxWorkspace._forked."""
    calls, original = [], workspace.SandboxWorkspace._forked

    def spy(self, *args, **kw):
        calls.append(args[2])
        return original(self, *args, **kw)

    monkeypatch.setattr(workspace.SandboxWorkspace, "_forked", spy)
    return calls


def test_nothing_a_command_leaves_reaches_the_next(forked):
    with workspace.SandboxWorkspace({"leave.py": LEAVE, "find.py": FIND}) as ws:
        code, output = ws.run(["leave.py"], timeout=60)
        assert code == 0, output
        left = _last_json(output)
        assert _learner_processes(ws.uid) == []  # the daemon ended with the command's namespace
        code, output = ws.run(["find.py"], timeout=60)
        assert code == 0, output
        found = _last_json(output)
        made = sorted(["home", ws.path.parent.name])  # /tmp/home, and the folders on the way to the workspace
        mounts = [line for line in Path("/proc/self/mountinfo").read_text().splitlines() if str(ws.box) in line]
    assert forked == [["leave.py"], ["find.py"]]
    assert left["shm"] >= 0 and left["pids"] == [1, 2, 5]  # the init, this command, the daemon
    assert found["pids"] == [1, 2]  # the init and this command: nothing of the host, of the server, of the last command
    assert found["abstract"] == "ConnectionRefusedError"
    assert found["tcp"] == [] and found["sysvipc"] == [] and found["files"] == made
    assert found["child_pid"] == left["child_pid"]  # a PID counter of its own: nothing to count the last one's by
    assert found["inode"] == left["inode"]  # a /tmp of its own: its inode numbers start again
    assert found["preloaded"] and found["modules"] == ["tinylm_grading"]  # nothing of the checks or the answers
    assert found["standin"] and found["answers"] == "ImportError"
    # the host's mounts: the workspace's own tmpfs while it lasts (nothing a command built), then nothing
    assert len(mounts) == 1 and " - tmpfs " in mounts[0]
    assert [line for line in Path("/proc/self/mountinfo").read_text().splitlines()
            if str(ws.box) in line or "/.root" in line] == []


SPAWN = r'''
import ctypes, os, subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import ctypes, time; ctypes.CDLL(None).prctl(1, 0, 0, 0, 0); time.sleep(600)"],
                 start_new_session=True)
print("started", flush=True)
time.sleep(600)
'''


@pytest.mark.slow  # (a process of its own, or a kernel, or a 5 s timeout: the slow tier)
def test_a_command_past_its_time_ends_with_all_it_started(forked):
    with workspace.SandboxWorkspace({"spawn.py": SPAWN}) as ws:
        code, output = ws.run(["spawn.py"], timeout=5)
        assert (code, output.strip()) == (-9, "started")
        assert _learner_processes(ws.uid) == []
    assert forked == [["spawn.py"]]


@pytest.mark.parametrize("script, code", [("import sys\nsys.exit(3)\n", 3), ("import os, signal\nos.kill(os.getpid(), "
                                                                            "signal.SIGKILL)\n", 128 + 9),
                                          ("raise ValueError('learner')\n", 1)])
def test_exit_statuses_are_bubblewraps(forked, script, code):
    with workspace.SandboxWorkspace({"s.py": script}) as ws:
        assert ws.run(["s.py"], timeout=60)[0] == code


def test_the_forked_and_the_bubblewrap_sandboxes_look_alike_from_inside(forked, tmp_path):
    """The probe of tests/sandbox_probe.py, run both ways: the same report but for the uid and the folder's name."""
    sys.path.insert(0, str(ROOT / "tests"))
    import sandbox_probe

    class Bubblewrap(sandbox.SandboxKernelManager):
        fork_commands = False

    reports = []
    for kind in (workspace.SandboxWorkspace, type("W", (workspace.SandboxWorkspace,), {"MANAGER": Bubblewrap})):
        report = sandbox_probe.in_workspace(os.getpid(), 9, tmp_path, workspace=kind)
        for key in ("uid", "gid", "groups"):
            report.pop(key)
        report["signal_host"] = None  # the probe may not signal this process: it was not asked to find it
        report["written"] = {("work" if k.endswith("/work") else k): v for k, v in report["written"].items()}
        reports.append(report)
    assert len(forked) == 1 and reports[0] == reports[1]


def test_an_option_it_does_not_build_is_refused_before_anything_runs():
    with pytest.raises(ValueError, match="--overlay"):
        forkbox.options(["--unshare-pid", "--overlay", "/a", "/b", "/c"])


def test_a_sandbox_that_cannot_be_built_runs_nothing(forked, monkeypatch):
    class Broken(sandbox.SandboxKernelManager):
        def bwrap_args(self, *args, **kw):
            return ["--ro-bind", "/nonexistent-tinylm", "/x", *super().bwrap_args(*args, **kw)]

    with type("W", (workspace.SandboxWorkspace,), {"MANAGER": Broken})({"w.py": "open('ran', 'w')\n"}) as ws:
        code, output = ws.run(["w.py"], timeout=60)
        assert code == 125 and output.startswith("sandbox: mount") and not (ws.path / "ran").exists()


SCAN = r'''
import ctypes, hashlib, json, re, sys
wanted, found = sys.argv[1], []
with open("/proc/self/maps") as maps:  # every writable mapping: the heap and what the server's Python allocated
    regions = [line.split() for line in maps]
for fields in regions:
    if not fields[1].startswith("rw") or len(fields) > 5 and fields[5].startswith("[v"):
        continue
    start, end = (int(x, 16) for x in fields[0].split("-"))
    chunk = ctypes.string_at(start, end - start)
    found += [m for m in re.findall(rb"tinylm-marker-[0-9a-f]{16}", chunk) if hashlib.sha256(m).hexdigest() == wanted]
print(json.dumps({"found": len(found)}))
'''


def test_a_command_finds_nothing_of_another_learners_request_in_its_memory(forked):
    """The red team read other learners' requests (their uids, their folders) out of the memory a forked command
    shares with its server: a request now reaches the child through a file only it reads."""
    import hashlib
    import secrets
    marker = f"tinylm-marker-{secrets.token_hex(8)}"
    with workspace.SandboxWorkspace({"other.py": "import sys\nprint(len(sys.argv))\n"}) as other:
        assert other.run(["other.py", marker], timeout=60) == (0, "2\n")
    with workspace.SandboxWorkspace({"scan.py": SCAN}) as ws:
        code, output = ws.run(["scan.py", hashlib.sha256(marker.encode()).hexdigest()], timeout=120)
    assert code == 0, output
    assert _last_json(output) == {"found": 0} and len(forked) == 2


FLOOD = "import sys\nfor _ in range(300):\n    sys.stdout.write('x' * 1_000_000)\nprint('the end')\n"
MEASURE = """
import json, resource, sys
from tinylm_grading import sandbox, workspace
class Manager(sandbox.SandboxKernelManager):
    fork_commands = sys.argv[1] == "fork"
with type("W", (workspace.SandboxWorkspace,), {"MANAGER": Manager})({"flood.py": sys.argv[2]}) as ws:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code, output = ws.run(["flood.py"], timeout=120)
print(json.dumps({"code": code, "tail": output[-8:], "length": len(output),
                  "grew_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024}))
"""


@pytest.mark.slow  # (a process of its own, or a kernel, or a 5 s timeout: the slow tier)
@pytest.mark.parametrize("path", ["fork", "bubblewrap"])
def test_the_grader_reads_only_the_end_of_what_a_command_prints(path):
    """300 MB printed: the grader keeps its last 64 kB and never holds the rest (a red-teamer's 3.7 GB print took 7.5 to
    11 GB of the grader's memory)."""
    import subprocess
    done = subprocess.run([sys.executable, "-c", MEASURE, path, FLOOD], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    report = _last_json(done.stdout)
    assert report["code"] == 0 and report["tail"] == "the end\n" and report["length"] == workspace.OUTPUT_BYTES
    assert report["grew_mb"] < 50, report  # the whole print is 300 MB


FILL = r'''
import errno, json, os, sys
report = {}
try:
    with open("big", "wb") as f:
        for _ in range(200):
            f.write(b"x" * 1_000_000)
            f.flush()
    report["bytes"] = "all written"
except OSError as e:
    report["bytes"] = errno.errorcode[e.errno]
os.remove("big")
made = 0
try:
    os.mkdir("many")
    while made < 100_000:
        open(f"many/{made}", "w").close()
        made += 1
except OSError as e:
    report["files"] = (errno.errorcode[e.errno], made < 4000)
print(json.dumps(report))
'''


def test_a_root_graders_workspace_holds_no_more_than_its_size_and_its_files(forked):
    """What a workspace's commands leave adds up (a red-teamer's filled /dev/shm 3.5 GB a command, and its inodes until
    every other learner's commands failed): a root grader's workspace is a tmpfs of its own, sized."""
    class Small(sandbox.SandboxKernelManager):
        workspace_mb, workspace_inodes = 64, 4000

    before = os.statvfs("/dev/shm")
    with type("W", (workspace.SandboxWorkspace,), {"MANAGER": Small})({"fill.py": FILL}) as ws:
        code, output = ws.run(["fill.py"], timeout=120)
        box = str(ws.box)
        mounted = box in Path("/proc/self/mountinfo").read_text()
        with workspace.SandboxWorkspace({"other.py": "print('fine')\n"}) as other:  # another learner's, meanwhile
            assert other.run(["other.py"], timeout=60) == (0, "fine\n")
    assert code == 0, output
    assert _last_json(output) == {"bytes": "ENOSPC", "files": ["ENOSPC", True]}
    assert os.statvfs("/dev/shm").f_ffree >= before.f_ffree - 100  # the host's /dev/shm: untouched
    assert mounted and box not in Path("/proc/self/mountinfo").read_text() and not os.path.exists(box)


def _cell(source: str, folder: Path, manager=sandbox.SandboxKernelManager, env: dict | None = None) -> str:
    """``source`` run in a graded notebook's kernel, in ``folder`` (a stage's name): the text it printed."""
    import nbformat
    from nbclient import NotebookClient
    folder.mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}})
    client.km = manager(course_root=str(folder.parent), kernel_name="python3")
    client.execute()
    return "".join(o.get("text", "") for o in nb.cells[0].outputs if o.output_type == "stream")


DAEMON = r'''
import ctypes, os, subprocess, sys
print("torch" in sys.modules, os.getuid())
subprocess.Popen([sys.executable, "-c", "import ctypes, time; ctypes.CDLL(None).prctl(1, 0, 0, 0, 0); time.sleep(600)"],
                 start_new_session=True)
'''


@pytest.mark.slow  # (a process of its own, or a kernel, or a 5 s timeout: the slow tier)
@pytest.mark.parametrize("fork", [True, False])
def test_a_root_graders_kernel_is_forked_from_a_server_that_imported_pytorch(tmp_path, fork):
    """Forked, the kernel finds PyTorch imported already; either way what it started is gone when it ends."""
    class Manager(sandbox.SandboxKernelManager):
        fork_commands = fork

    preloaded, uid = _cell(DAEMON, tmp_path / "01_attention", Manager).split()
    assert preloaded == str(fork) and _learner_processes(int(uid)) == []


@pytest.mark.slow  # (a process of its own, or a kernel, or a 5 s timeout: the slow tier)
def test_a_kernel_finds_nothing_of_another_kernels_request_in_its_memory(tmp_path):
    import hashlib
    import secrets
    marker = f"tinylm-marker-{secrets.token_hex(8)}"
    assert _cell("print('other')", tmp_path / marker / "01_attention") == "other\n"  # its folder: in its request
    scan = f"import sys\nsys.argv = ['scan', {hashlib.sha256(marker.encode()).hexdigest()!r}]\n" + SCAN
    assert _last_json(_cell(scan, tmp_path / "mine" / "01_attention")) == {"found": 0}


@pytest.mark.slow  # (a process of its own, or a kernel, or a 5 s timeout: the slow tier)
def test_the_workers_kernel_server_holds_nothing_of_the_graders_environment(tmp_path):
    """tinylm-autograde's workers connect to one kernel server (its imports done once for the class); its environment
    is what a sandbox keeps, not the grader's: a kernel finds no gradebook's address in its memory or /proc."""
    import hashlib
    secret = "postgresql://grader:tinylm-secret-password@db/gradebook"
    env = {**os.environ, "TINYLM_GRADEBOOK": secret}
    with sandbox.kernel_server_for_workers(env) as workers:
        path = workers[sandbox.KERNEL_SERVER]
        assert oct(os.stat(os.path.dirname(path)).st_mode & 0o777) == "0o700"
        cell = ("import ctypes, hashlib, os, re, sys\nfound = []\n"  # its memory: the environment it started with too
                "for fields in [line.split() for line in open('/proc/self/maps')]:\n"
                "    if fields[1].startswith('rw') and not (len(fields) > 5 and fields[5].startswith('[v')):\n"
                "        start, end = (int(x, 16) for x in fields[0].split('-'))\n"
                "        found += [m for m in re.findall(rb'grader:([a-z-]+)@db', ctypes.string_at(start, end - start))\n"
                f"                  if hashlib.sha256(m).hexdigest() == {hashlib.sha256(b'tinylm-secret-password').hexdigest()!r}]\n"
                "print('torch' in sys.modules, len(found) > 0, 'TINYLM_GRADEBOOK' in os.environ)")
        code = (f"import os, sys\nos.environ.update({ {sandbox.KERNEL_SERVER: path, 'TINYLM_GRADEBOOK': secret}!r})\n"
                f"sys.path.insert(0, {str(ROOT / 'tests')!r})\nimport test_forkbox, pathlib\n"
                f"print(test_forkbox._cell({cell!r}, pathlib.Path({str(tmp_path / '02_multihead')!r})))\n"
                "from tinylm_grading import sandbox\nprint(list(sandbox._KERNEL_SERVERS))")
        import subprocess
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert done.returncode == 0, done.stderr[-3000:]
        assert [line for line in done.stdout.splitlines() if line] == ["True False False", f"[{path!r}]"]
    assert not os.path.exists(path)


@pytest.mark.slow  # (a process of its own, or a kernel, or a 5 s timeout: the slow tier)
def test_a_server_that_dies_takes_its_commands_with_it(forked):
    """bubblewrap's --die-with-parent, on the forked path: a red-teamer killed the kernel server, and its kernels ran on
    (an idle kernel never ends by itself)."""
    import threading
    import time
    from tinylm_checks import _forked
    results = []
    with workspace.SandboxWorkspace({"sleep.py": "import time\nprint('asleep', flush=True)\ntime.sleep(600)\n"}) as ws:
        def run():
            try:
                results.append(ws.run(["sleep.py"], timeout=120))
            except RuntimeError as e:  # the grader's check errs, never a grade from a half-run command
                results.append(e)

        thread = threading.Thread(target=run)
        thread.start()
        for _ in range(300):
            if getattr(ws, "uid", None) and _learner_processes(ws.uid):
                break
            time.sleep(0.05)
        assert _learner_processes(ws.uid), "the command never started"
        [server] = [s for s in _forked._SERVERS.values() if s.preload == workspace.PRELOAD and s.proc is not None]
        server.proc.kill()
        thread.join(60)
        for _ in range(100):
            if not _learner_processes(ws.uid):
                break
            time.sleep(0.05)
        assert _learner_processes(ws.uid) == [] and len(results) == 1 and isinstance(results[0], RuntimeError)
