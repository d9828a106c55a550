"""A demo class on JupyterHub (``make class``): an instructor and learners as separate Unix users on 127.0.0.1:8000.

What it sets up, in a class folder (``--root``, default ``/srv/tinylm-class``) every learner can traverse:

- the learners: Unix users ``tinylm-learner1`` ... (created if missing, homes readable by their owner only), each
  with a random password, printed; the instructor is the user who runs the command (root on CI), who logs in
  under that name and works in this course folder, with formgrader;
- ``venv-learner/``: the learners' environment without answers (:mod:`tinylm_grading.learnerenv`, with
  ``jupyterhub-singleuser``); its nbgrader configuration names the course and the exchange;
- ``tmp/NAME/``: each learner's own temporary folder (their ``TMPDIR``: jieba's cache, matplotlib's, ...);
- ``exchange/``: nbgrader's exchange (:func:`exchange`), where no learner can rename or replace anything above their
  own submission: its root is the instructor's with the sticky bit, the course's folder and its ``outbound`` and
  ``feedback`` are the instructor's, and learners may only add their submission's folder to ``inbound``, which they
  cannot list and where the sticky bit keeps them from renaming or removing another's;
- ``run/checks.sock``: the check service (:mod:`tinylm_grading.checkservice`), run as the instructor, holding
  the reference; the learners' check calls reach it through this socket and nothing else of the instructor's;
- ``hub/`` (the instructor's only): JupyterHub's database, cookie secret, passwords and configuration;
  ``proxy/``: configurable-http-proxy from npm.

The course folder itself (this repository) must not be readable by learners: ``make class`` removes the others'
permissions from its top folder (``chmod o-rwx``) and says so.

Needs root (it creates users and runs their servers as them), Node's ``npm`` (for the proxy) and the packages of
``.venv`` (``jupyterhub`` is pinned with the test packages). Ctrl-C stops the hub, the servers and the service.
"""
from __future__ import annotations

import hmac
import json
import os
import pwd
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

from tinylm_checks._text import say
from tinylm_solutions.cli import UsageError, _fail, _help, _Parser
from tinylm_solutions.i18n import display_width, pad

from . import learnerenv

ROOT = Path(__file__).resolve().parent.parent
PROXY = "configurable-http-proxy@4.6.3"
HUB_VERSION = "jupyterhub==6.1.1"
PORT = 8000


def instructor() -> str:
    """The instructor: the Unix user who runs the class."""
    return pwd.getpwuid(os.getuid()).pw_name


def learner_names(n: int) -> list[str]:
    return [f"tinylm-learner{i}" for i in range(1, n + 1)]


def _run(*args, **kwargs):
    return subprocess.run([str(a) for a in args], check=True, **kwargs)


def create_learners(names: list[str]) -> None:
    """Unix users with a home of their own that no other learner can read."""
    for name in names:
        try:
            pwd.getpwnam(name)
        except KeyError:
            _run("useradd", "--create-home", "--shell", "/bin/bash", name)
        os.chmod(pwd.getpwnam(name).pw_dir, 0o700)


def remove_learners(names: list[str]) -> None:
    for name in names:
        subprocess.run(["userdel", "--remove", name], capture_output=True)


def shared_python() -> str:
    """A Python of this version that every user can run (:func:`tinylm_grading.learnerenv.shared_python`).

    Raises:
        RuntimeError: there is none.
    """
    found = learnerenv.shared_python()
    if found is None:
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        raise RuntimeError(f"no Python {version} that every user can run (with venv): install Debian's python3-venv")
    return found


def private_tmp(root: Path, name: str) -> Path:
    """``root/tmp/NAME``: the learner's own temporary folder (0700, theirs), their ``TMPDIR``. ``/tmp`` is shared: a
    learner who wrote ``/tmp/jieba.cache`` first changed how every other learner's Chinese text was cut into words.
    ``root/tmp`` is root's (0711): no learner can make or replace another's folder in it, and none can list it."""
    tmp = root / "tmp"
    tmp.mkdir(exist_ok=True)
    os.chmod(tmp, 0o711)
    user = pwd.getpwnam(name)
    folder = tmp / name
    folder.mkdir(exist_ok=True)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)  # (root's folder: no link can be put there)
    try:
        os.fchown(fd, user.pw_uid, user.pw_gid)
        os.fchmod(fd, 0o700)
    finally:
        os.close(fd)
    return folder


EXCHANGE = (("exchange", 0o1777), ("exchange/tinylm", 0o755), ("exchange/tinylm/outbound", 0o755),
            ("exchange/tinylm/inbound", 0o3733), ("exchange/tinylm/feedback", 0o711))
"""The exchange's folders (:func:`exchange`) and their modes."""


def exchange(root: Path) -> Path:
    """``root/exchange``, nbgrader's exchange for the course ``tinylm``, made (or made so again) with the folders of
    :data:`EXCHANGE`, each the instructor's:

    - the root: 1777. nbgrader's learners' side refuses a root it cannot write in ("Unwritable directory"), and its
      ``release_assignment`` makes one that is not 0777 so (without the sticky bit); with the sticky bit no learner
      can rename or remove the course's folder. Without it, a learner put their own course folder in its place: the
      classmates fetched their notebook and submitted to them, and root's ``release_feedback`` wrote through their
      symlink onto the gradebook.
    - ``tinylm``, ``outbound`` (0755) and ``feedback`` (0711, which learners cannot list: each finds their feedback by
      its hash), nbgrader's modes. nbgrader makes them only when they are missing, as the user who releases: here they
      are never missing, so that no learner can make them first.
    - ``inbound``: 3733, nbgrader's 2733 (learners make folders in it but cannot list it; they get the instructor's
      group) and the sticky bit, so that none can rename or remove a classmate's submission.

    The folders are reached through descriptors opened without following symlinks, and their modes set once all are
    there. Raises UsageError (in the instructor's language) when one is there but not a folder of the instructor's
    (a learner's, left by an earlier exchange that was open to all, or a symlink): its content cannot be trusted.
    """
    fds = {"": os.open(root, os.O_RDONLY | os.O_DIRECTORY)}
    try:
        for folder, _ in EXCHANGE:
            parent, name = fds[os.path.dirname(folder)], os.path.basename(folder)
            try:
                os.mkdir(name, 0o700, dir_fd=parent)
            except FileExistsError:
                pass
            try:
                fds[folder] = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
                owner = os.fstat(fds[folder]).st_uid
            except OSError:  # a symlink, or not a folder
                owner = os.stat(name, dir_fd=parent, follow_symlinks=False).st_uid
            if folder not in fds or owner != os.getuid():
                raise UsageError(say("grading.class.exchange_not_yours", folder=root / folder, owner=_user(owner)))
        for folder, mode in reversed(EXCHANGE):  # the root last: open to all once everything is there
            os.fchmod(fds[folder], mode)
    finally:
        for fd in fds.values():
            os.close(fd)
    return root / "exchange"


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def setup(root: Path, learners: int, released: str, course: Path = ROOT) -> dict[str, str]:
    """Everything the class needs under ``root`` (see the module's text), the instructor working in ``course`` (an
    nbgrader course folder: this repository, or a copy). Returns user -> password."""
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o755)
    for sub, mode in (("hub", 0o700), ("run", 0o755)):
        (root / sub).mkdir(exist_ok=True)
        os.chmod(root / sub, mode)
    exchange(root)
    for folder in {ROOT, course}:  # learners: not even a listing of the course and the reference
        os.chmod(folder, stat.S_IMODE(folder.stat().st_mode) & ~0o007)
    names = learner_names(learners)
    create_learners(names)
    for name in names:
        private_tmp(root, name)
    venv = root / "venv-learner"
    learnerenv.build(venv, released, extra=(HUB_VERSION,), python=shared_python())
    config = venv / "etc" / "jupyter" / "nbgrader_config.py"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'c = get_config()\nc.CourseDirectory.course_id = "tinylm"\n'
                      f'c.Exchange.root = {str(root / "exchange")!r}\n')
    if not (root / "proxy" / "node_modules" / ".bin" / "configurable-http-proxy").exists():
        _run("npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", root / "proxy", PROXY)
    passwords = {name: secrets.token_urlsafe(9) for name in [instructor(), *names]}
    secret = root / "hub" / "passwords.json"
    secret.write_text(json.dumps(passwords))
    os.chmod(secret, 0o600)
    (root / "hub" / "jupyterhub_config.py").write_text(hub_config(root, names, course))
    return passwords


def hub_config(root: Path, learners: list[str], course: Path) -> str:
    """JupyterHub's configuration: this module's authenticator and spawn hook, the local process spawner."""
    return f'''# written by tinylm_grading.hubclass (make class)
import sys
sys.path.insert(0, {str(ROOT)!r})
from tinylm_grading import hubclass
c = get_config()
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {PORT}
c.JupyterHub.db_url = "sqlite:///{root / 'hub' / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = {str(root / 'hub' / 'cookie_secret')!r}
c.ConfigurableHTTPProxy.command = [{str(root / 'proxy' / 'node_modules' / '.bin' / 'configurable-http-proxy')!r}]
c.ConfigurableHTTPProxy.pid_file = {str(root / 'hub' / 'proxy.pid')!r}
c.JupyterHub.authenticator_class = hubclass.PasswordFileAuthenticator
c.PasswordFileAuthenticator.passwords_file = {str(root / 'hub' / 'passwords.json')!r}
c.Authenticator.allowed_users = {set([instructor(), *learners])!r}
c.Authenticator.admin_users = {{{instructor()!r}}}
c.JupyterHub.spawner_class = "jupyterhub.spawner.LocalProcessSpawner"
c.Spawner.default_url = "/lab"
# no news pop-up; the app object on the page (tests/test_hub.py drives JupyterLab through it; it gives the page's own
# scripts nothing they could not do through the server's API)
c.Spawner.args = ["--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                  "--LabApp.expose_app_in_browser=True"]
c.Spawner.http_timeout = 120
c.Spawner.start_timeout = 120
c.Spawner.pre_spawn_hook = hubclass.spawn_hook({str(root)!r}, {str(course)!r})
'''


try:
    from jupyterhub.auth import Authenticator
    from traitlets import Unicode

    class PasswordFileAuthenticator(Authenticator):
        """Each user's password from a JSON file only the hub's user can read (``make class`` writes it)."""

        passwords_file = Unicode(config=True)

        async def authenticate(self, handler, data):
            passwords = json.loads(Path(self.passwords_file).read_text())
            name, given = str(data.get("username", "")), str(data.get("password", ""))
            if name in passwords and hmac.compare_digest(passwords[name].encode(), given.encode()):
                return name
            return None
except ImportError:  # jupyterhub is a test package: only the hub needs it
    pass


def spawn_hook(root: str, course: str):
    """Each server's command, folder and environment: the instructor in the course folder with ``.venv``, a
    learner in their home with the environment without answers and the check service's socket."""
    root_path = Path(root)

    def hook(spawner):
        name = spawner.user.name
        if name == instructor():
            bin_dir = Path(sys.executable).parent
            spawner.cmd = [str(bin_dir / "jupyterhub-singleuser"), *(["--allow-root"] if os.getuid() == 0 else [])]
            spawner.notebook_dir = course
            # the server starts in the user's home: nbgrader finds the course's nbgrader_config.py on the config path
            spawner.environment.update({"PATH": f"{bin_dir}:/usr/bin:/bin", "JUPYTER_CONFIG_PATH": course,
                                        "TINYLM_EXCHANGE": str(root_path / "exchange")})
        else:
            bin_dir = root_path / "venv-learner" / "bin"
            spawner.cmd = [str(bin_dir / "jupyterhub-singleuser")]
            spawner.notebook_dir = pwd.getpwnam(name).pw_dir
            spawner.environment.update({"PATH": f"{bin_dir}:/usr/bin:/bin",
                                        "TMPDIR": str(private_tmp(root_path, name)),
                                        "TINYLM_CHECK_SERVICE": str(root_path / "run" / "checks.sock")})
    return hook


def start(root: Path, released: str) -> list[subprocess.Popen]:
    """The check service (answering the checks of the stages up to ``released``) and the hub, as child processes
    (the service first: the learners' checks need it)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    service = subprocess.Popen([sys.executable, "-m", "tinylm_grading.checkservice", "--socket",
                                str(root / "run" / "checks.sock"), "--released", released],
                               env=env, stdout=subprocess.PIPE, text=True)
    print(service.stdout.readline().rstrip(), flush=True)
    hub = subprocess.Popen([str(Path(sys.executable).parent / "jupyterhub"), "-f",
                            str(root / "hub" / "jupyterhub_config.py")], cwd=root / "hub", env=env,
                           stdout=subprocess.DEVNULL, stderr=open(root / "hub" / "jupyterhub.log", "w"))
    return [service, hub]


def main(argv=None) -> int:
    """``make class`` (``python -m tinylm_grading.hubclass``), in the instructor's language (``TINYLM_LANG``): the demo
    class until Ctrl-C (exit 0); 2 without root or npm."""
    parser = _Parser(prog="make class", description=_help(say("grading.class.description", port=PORT)))
    defaults = {"root": Path("/srv/tinylm-class"), "learners": 3, "released": "01_attention"}
    parser.add_argument("--root", type=Path, help=_help(say("grading.class.help.root", default=defaults["root"])))
    parser.add_argument("--learners", type=int,
                        help=_help(say("grading.class.help.learners", default=defaults["learners"])))
    parser.add_argument("--released", help=_help(say("grading.class.help.released", default=defaults["released"])))
    parser.set_defaults(**defaults)
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        return _fail(parser.prog, UsageError(say("grading.class.needs_root")))
    if not shutil.which("npm"):
        return _fail(parser.prog, UsageError(say("grading.class.needs_npm")))
    try:
        passwords = setup(args.root, args.learners, args.released)
    except UsageError as e:
        return _fail(parser.prog, e)
    processes = start(args.root, args.released)
    print(say("grading.class.ready", url=f"http://127.0.0.1:{PORT}/", log=args.root / "hub" / "jupyterhub.log"))
    print(say("grading.class.closed", folder=ROOT))
    roles = {"instructor": say("grading.class.instructor"), "learner": say("grading.class.learner")}
    width = max(display_width(r) for r in roles.values())
    for name, password in passwords.items():
        role = roles["instructor" if name == instructor() else "learner"]
        print(f"  {pad(role, width)} {name:18} {say('grading.class.password')} {password}")
    print(say("grading.class.stop"), flush=True)
    try:
        while all(p.poll() is None for p in processes):
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        for p in reversed(processes):
            p.send_signal(signal.SIGTERM)
        for p in processes:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
