"""What learner code can do from inside the grading sandbox: one probe, run by the grader's two paths.

:data:`PROBE` is a plain Python script (standard library only) that reports, as one JSON line, who it runs as, which
host-global files of ``/proc`` it can open for writing (opened, never written), whether it can see or signal a process
of the host, where it can write, and what network it has. :func:`in_workspace` runs it as a capstone command
(:class:`~tinylm_grading.workspace.SandboxWorkspace`), :func:`in_kernel` in a graded notebook's kernel
(:class:`~tinylm_grading.sandbox.SandboxKernelManager`). Run as a script (``python tests/sandbox_probe.py HOST_PID
PORT FOLDER``), it prints both reports: tests/test_sandbox.py runs it so as an ordinary user's grader.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

PROBE = r'''
import json, os, signal, socket, sys
host_pid, port, targets = int(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
r = {"uid": os.getuid(), "gid": os.getgid(), "groups": sorted(os.getgroups())}
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
r["caps"] = {k: int(status[k], 16) for k in ("CapPrm", "CapEff", "CapBnd", "CapAmb")}
r["no_new_privs"] = int(status["NoNewPrivs"])
writable = []  # host-global files of /proc this process may open for writing: opened, never written
for top in ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs", "/proc/kcore"):
    walked = os.walk(top) if os.path.isdir(top) else [(os.path.dirname(top), [], [os.path.basename(top)])]
    for folder, _, files in walked:
        for name in files:
            path = os.path.join(folder, name)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                continue
            os.close(fd)
            writable.append(path)
r["proc_writable"] = writable
r["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
try:  # a process of the host, by its number there: this one must not reach it
    os.kill(host_pid, signal.SIGKILL)
    r["signal_host"] = "sent"
except OSError as e:
    r["signal_host"] = type(e).__name__
written = {}
for target in targets:
    try:
        with open(os.path.join(target, "tinylm-probe-written"), "w") as f:
            f.write("x")
        written[target] = "written"
    except OSError as e:
        written[target] = type(e).__name__
r["written"] = written
import ctypes, platform
libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}.get(platform.machine(), (None, None))
if ADD_KEY is not None:  # a key in the kernel's keyrings outlives the sandbox: refused (if not, invalidated again)
    key = libc.syscall(ADD_KEY, b"user", b"tinylm-probe", b"x", 1, -2)
    r["keyring"] = os.strerror(ctypes.get_errno()) if key < 0 else "added"
    if key >= 0:
        libc.syscall(KEYCTL, 21, key)  # KEYCTL_INVALIDATE
r["user_namespace"] = os.strerror(ctypes.get_errno()) if libc.unshare(0x10000000) < 0 else "made"
r["interfaces"] = sorted(name for _, name in socket.if_nameindex())
try:  # a server listening on the host's loopback
    socket.create_connection(("127.0.0.1", port), timeout=3).close()
    r["host_loopback"] = "connected"
except OSError as e:
    r["host_loopback"] = type(e).__name__
print(json.dumps(r))
'''
"""The probe: ``python probe.py HOST_PID PORT TARGETS_JSON`` prints one JSON object."""


def targets(folder: Path) -> list[str]:
    """Where the probe tries to write: its own folder and /tmp (allowed), and the places it must not change."""
    import tinylm_checks
    import tinylm_solutions
    places = ["/", "/usr", "/etc", "/dev", "/proc/sys/kernel", sys.prefix, sys.base_prefix, os.path.dirname(os.__file__),
              os.path.dirname(tinylm_checks.__file__), os.path.dirname(tinylm_solutions.__file__)]
    return [str(folder), "/tmp", *places]


def in_workspace(host_pid: int, port: int, folder: Path, workspace=None) -> dict:
    """The probe's report, run as a capstone command in a sandboxed workspace (``workspace``: its class, default
    :class:`~tinylm_grading.workspace.SandboxWorkspace`)."""
    from tinylm_grading.workspace import SandboxWorkspace
    with (workspace or SandboxWorkspace)({"probe.py": PROBE}) as ws:
        code, output = ws.run(["probe.py", str(host_pid), str(port), json.dumps(targets(ws.path))], timeout=120)
    assert code == 0, output
    return json.loads(output.strip().splitlines()[-1])


def in_kernel(host_pid: int, port: int, folder: Path) -> dict:
    """The probe's report, run in a sandboxed kernel whose working folder is ``folder`` (an autograded stage's)."""
    import nbformat
    from nbclient import NotebookClient

    from tinylm_grading.sandbox import SandboxKernelManager
    folder.mkdir(parents=True, exist_ok=True)
    cell = ("import sys, json, os\nsys.argv = ['probe', %r, %r, json.dumps(%r)]\nexec(%r)"
            % (str(host_pid), str(port), targets(folder), PROBE))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}})
    client.km = SandboxKernelManager(course_root=str(folder.parent), kernel_name="python3")
    client.execute()
    text = "".join(o.get("text", "") for o in nb.cells[0].outputs if o.output_type == "stream")
    assert text.strip(), nb.cells[0].outputs
    return json.loads(text.strip().splitlines()[-1])


if __name__ == "__main__":  # as an ordinary user's grader: both reports, one JSON line
    host_pid, port, folder = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    reports = {"grader_uid": os.getuid(), "workspace": in_workspace(host_pid, port, folder),
               "kernel": in_kernel(host_pid, port, Path(tempfile.mkdtemp(dir=folder)) / "01_attention")}
    print(json.dumps(reports))
