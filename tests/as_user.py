"""Run a command as an ordinary user, for the tests that stand in for a grader who is not root.

The suite runs as root (CI does), and an ordinary user cannot always reach its Python or the checkout: pyenv's lives
under ``/root`` (mode 0700), and a CI's clean clone may sit in a folder of mode 0700. :func:`run` starts ``argv`` as
``uid`` (no capabilities, no groups) in a mount namespace of its own that shows the machine as it is, except that
each folder on the way to ``needed`` that other users may not enter is replaced by an empty one they may, with only
the needed paths bound back into it, and a needed folder that other users may not enter or list is replaced by one
they may, holding its own entries bound back. Nothing else changes: the same kernel, the same ``/proc``, the files'
own modes below a needed folder, the user's own limits; the command may start user namespaces (unprivileged
bubblewrap) as that user would.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tinylm_grading.sandbox import bwrap_path


def _closed(path: Path, bits: int = 0o001) -> bool:
    return path.stat().st_mode & bits != bits


def reachable_args(needed: list[Path], uid: int) -> list[str]:
    """bubblewrap's arguments (after ``--dev-bind / /``) that make each of ``needed`` reachable by ``uid`` (see the
    module's docstring); a needed path inside another is reached through it."""
    args, covered = [], set()
    paths = sorted({Path(p).resolve() for p in needed}, key=lambda p: len(p.parts))
    for path in [p for p in paths if not any(p != q and p.is_relative_to(q) for q in paths)]:
        closed = [a for a in reversed(path.parents) if a != Path("/") and _closed(a)]
        if closed:
            top = closed[0]
            if top not in covered:
                args += ["--perms", "0755", "--tmpfs", str(top)]
                covered.add(top)
            for folder in [a for a in reversed(path.parents) if a.is_relative_to(top) and a != top]:
                args += ["--perms", "0755", "--dir", str(folder)]
            args += ["--bind", str(path), str(path)]
        if path.is_dir() and path.stat().st_uid != uid and _closed(path, 0o005):  # its entries bound back into an open folder
            args += ["--perms", "0755", "--tmpfs", str(path)]
            for entry in sorted(path.iterdir()):
                args += ["--symlink", os.readlink(entry), str(entry)] if entry.is_symlink() else \
                    ["--bind", str(entry), str(entry)]
    return args


def run(uid: int, argv: list[str], needed: list[Path], env: dict[str, str], timeout: float,
        cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``argv`` as ``uid`` in ``cwd`` (see the module's docstring); its output captured as text."""
    assert os.geteuid() == 0, "needs root, to become another user"
    wrapper = [bwrap_path(), "--dev-bind", "/", "/", *reachable_args(needed, uid), "--die-with-parent", "--",
               "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
               "--bounding-set=-all", "--"]
    if cwd is not None:
        at = wrapper.index("--die-with-parent")
        wrapper[at:at] = ["--chdir", str(cwd)]
    return subprocess.run([*wrapper, *argv], env=env, capture_output=True, text=True, timeout=timeout)
