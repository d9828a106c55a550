"""Stand-ins for machines the test suite does not run on (tests/test_portable.py), set up in every Python process
started with this folder on ``PYTHONPATH`` (pytest, the commands it runs, their children), before anything imports.

``TINYLM_STANDIN`` names them, separated by commas:

- ``no-unix``: the course's code sees Python as Windows has it. In each module of the course's packages
  (``tinylm_*``) and in the script a process runs (``__main__``: ``python train.py``, a check's launcher),
  ``import os``, ``signal`` and ``socket`` give the module without its Unix-only names (:data:`GONE`: ``os.fork``,
  ``os.register_at_fork``, ``signal.SIGKILL``, ``socket.AF_UNIX``...), and importing a Unix-only module of the
  standard library (:data:`BLOCKED`: ``resource``, ``fcntl``, ``pwd``...) raises ImportError. Other libraries keep
  Linux's: they take a Linux branch here (PyTorch calls ``os.register_at_fork`` as it is imported, NumPy ``os.uname``)
  where on Windows they take their own.
- ``encoding``: an ``EncodingWarning`` (``PYTHONWARNDEFAULTENCODING=1``: a text opened without an encoding) raised in
  one of the course's packages is an error; other libraries' are ignored (printed, they would change the output
  that tests compare).
"""
import builtins
import os
import sys
import types

STANDINS = set(filter(None, os.environ.get("TINYLM_STANDIN", "").split(",")))
OURS = ("tinylm_checks", "tinylm_solutions", "tinylm_grading", "tinylm_course")

GONE = {
    "os": ("fork", "forkpty", "register_at_fork", "pidfd_open", "getuid", "geteuid", "getgid", "getegid", "getgroups",
           "setsid", "getsid", "setpgid", "getpgid", "setpgrp", "getpgrp", "killpg", "sched_getaffinity",
           "sched_setaffinity", "getloadavg", "uname", "statvfs", "fstatvfs", "wait3", "wait4", "waitid", "mkfifo",
           "chown", "lchown", "fchown", "chroot", "nice", "openpty", "setuid", "seteuid", "setgid", "setegid",
           "initgroups", "getpriority", "setpriority", "posix_spawn", "posix_spawnp", "memfd_create", "eventfd",
           "WNOHANG", "sync"),
    "signal": ("SIGKILL", "SIGXCPU", "SIGALRM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGCHLD", "SIGPIPE",
               "SIGSTOP", "SIGCONT", "SIGTSTP", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "alarm", "setitimer",
               "getitimer", "pause", "pthread_kill", "pthread_sigmask", "siginterrupt", "sigwait", "sigtimedwait",
               "sigwaitinfo", "sigpending", "ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF"),
    "socket": ("AF_UNIX", "SO_PEERCRED", "SCM_RIGHTS", "SCM_CREDENTIALS", "sethostname", "CMSG_LEN", "CMSG_SPACE"),
}
"""Module: the names Python on Windows does not have (each exists on Linux: :func:`_no_unix` checks)."""
BLOCKED = ("resource", "fcntl", "pwd", "grp", "termios", "tty", "pty", "crypt", "spwd", "syslog", "nis", "posix",
           "_posixsubprocess", "_posixshmem", "readline")
"""The standard library's Unix-only modules."""
SEEN: list[str] = []
"""The modules that were given Windows' view, in the order they were imported."""


def _windows_view(module: types.ModuleType) -> types.ModuleType:
    view = types.ModuleType(module.__name__, module.__doc__)
    view.__dict__.update({k: v for k, v in vars(module).items() if k not in GONE[module.__name__]})
    return view


def _no_unix() -> None:
    import signal
    import socket
    for name, gone in GONE.items():
        missing = [n for n in gone if not hasattr(sys.modules[name], n)]
        assert not missing, f"tests/standin: {name} has no {missing} even on this machine"
    views = {name: _windows_view(sys.modules[name]) for name in GONE}
    real_import = builtins.__import__

    def windows_import(name, globals=None, locals=None, fromlist=(), level=0):
        top = name.partition(".")[0]
        if level == 0 and top in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (tests/standin: as on Windows)", name=name)
        module = real_import(name, globals, locals, fromlist, level)
        return views.get(module.__name__, module) if level == 0 else module

    seen = dict(vars(builtins), __import__=windows_import)

    class Loader:
        """The loader that found one of the course's modules, with Windows' view as the module's builtins."""

        def __init__(self, loader):
            self.loader = loader

        def __getattr__(self, name):  # get_code, get_source, get_resource_reader, ...
            return getattr(self.loader, name)

        def create_module(self, spec):
            return self.loader.create_module(spec)

        def exec_module(self, module):
            module.__builtins__ = seen
            SEEN.append(module.__name__)
            self.loader.exec_module(module)

    class Finder:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name.partition(".")[0] not in OURS:
                return None
            for finder in sys.meta_path:
                if finder is Finder or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = Loader(spec.loader)
                    return spec
            return None

    sys.meta_path.insert(0, Finder)
    sys.modules["__main__"].__builtins__ = seen  # the script this process runs (python train.py, python -m ...)


def _encoding() -> None:
    import warnings
    warnings.filterwarnings("ignore", category=EncodingWarning)  # (on stderr they would change what tests read)
    warnings.filterwarnings("error", category=EncodingWarning, module=r"tinylm_")


if "no-unix" in STANDINS:
    _no_unix()
if "encoding" in STANDINS:
    _encoding()
