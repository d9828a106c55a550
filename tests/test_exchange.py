"""nbgrader's exchange knows who submitted (tinylm_grading.submission.RegularFilesCollect), and no learner can take it
over (the layout of tinylm_grading.hubclass.exchange; the instructor's commands' checks), with real Unix users.

Each learner is a throwaway Unix user (made with useradd, removed afterwards). A learner's side runs in a child of this
process that has dropped to that user's uid: the honest fetch and submit are nbgrader's own ``ExchangeFetchAssignment``
and ``ExchangeSubmit``; the attacks are what a learner can do with a shell, with no nbgrader (rename, make a folder in
``inbound``, which learners may write to, write a file, make a hard link or a symlink). The exchange is laid out as
``make class`` lays it out (``hubclass.exchange``); the instructor's side is the real ``nbgrader release_assignment``,
``collect``, ``autograde``, ``generate_feedback`` and ``release_feedback`` as root, with the course's
nbgrader_config.py. The attacks on the exchange itself (a security review's, on the earlier layout: its root was
writable by all, without the sticky bit):

- the course's folder ``exchange/tinylm`` renamed away and the learner's own put in its place: a classmate fetched
  the learner's notebook, submitted into the learner's ``inbound`` (read, then removed: nothing to collect), and a
  process of the learner's swapped the ``feedback`` folder root had just made for its own, where a symlink made root's
  ``release_feedback`` write the feedback page onto the gradebook;
- a classmate's submission folder renamed or removed (nbgrader's ``inbound`` had no sticky bit);
- folders of the exchange that someone else could change: the instructor's commands refuse to work in them, and
  ``release_feedback`` writes through no symlink.

And who submitted, and when:

- a folder dropped into ``inbound`` under a classmate's name, dated later than the classmate's real submission (on
  nbgrader's own collect it is collected as the classmate's, after a warning);
- a file put into a classmate's submission folder (nbgrader makes it writable by all), and a hard link to a classmate's
  file, between users and under one shared uid;
- a student id that is no Unix user of the machine;
- late work with a back-dated ``timestamp.txt`` (nbgrader's autograde records that time, and no late penalty);
- a timestamp from the future.

Needs root (it makes users and drops to their uids): skipped without it.
"""
from __future__ import annotations

import ctypes
import datetime
import os
import pwd
import select
import shutil
import stat
import subprocess
import tempfile
import time
import traceback
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange.default.fetch_assignment import ExchangeFetchAssignment
from nbgrader.exchange.default.submit import ExchangeSubmit  # imported here: a learner's child cannot read the stdlib
from nbgrader.utils import notebook_hash

from nbgrader_cli import nbgrader
from tinylm_grading import hubclass

ROOT = Path(__file__).resolve().parent.parent
A = "00_setup"
COURSE = "tinylm"
FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"  # nbgrader's timestamp.txt

pytestmark = [pytest.mark.slow]
if os.geteuid() != 0:
    pytest.skip("the exchange's tests make Unix users: they need root", allow_module_level=True)


@pytest.fixture(scope="module")
def users():
    """Three Unix users with no home and no login, removed afterwards: name -> pwd entry."""
    names = [f"tlx{os.getpid() % 100000}{c}" for c in "abc"]
    for name in names:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group", name],
                       check=True, capture_output=True)
    yield {name: pwd.getpwnam(name) for name in names}
    for name in names:
        subprocess.run(["userdel", name], capture_output=True)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A course folder (the repository's nbgrader_config.py) with stage 00 generated."""
    course = tmp_path_factory.mktemp("exchange") / "course"
    course.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", course)
    shutil.copytree(ROOT / "notebooks" / A, course / "notebooks" / A)
    nbgrader("generate_assignment", A, "--force", cwd=course)
    return course


@pytest.fixture
def klass(generated, users):
    """A class: a folder every user can traverse, holding the instructor's course (closed to others), the exchange
    as ``make class`` makes it (hubclass.exchange) with stage 00 released, and a home per learner with the release
    fetched."""
    root = Path(tempfile.mkdtemp(prefix="tinylm-exchange-"))
    root.chmod(0o755)
    course = root / "course"
    shutil.copytree(generated, course)
    course.chmod(0o700)
    exchange = hubclass.exchange(root)
    append(course / "nbgrader_config.py", f"\nc.Exchange.root = {str(exchange)!r}\n")
    nbgrader("release_assignment", A, cwd=course)
    homes = {}
    for name, user in users.items():
        home = homes[name] = root / "home" / name
        shutil.copytree(course / "release" / A, home / A)
        for path in [home, *home.rglob("*")]:
            os.chown(path, user.pw_uid, user.pw_gid)
        home.chmod(0o700)
    yield {"root": root, "course": course, "exchange": exchange, "inbound": exchange / COURSE / "inbound",
           "homes": homes, "users": users, "gradebook": course / "gradebook.db"}
    shutil.rmtree(root)


def append(path: Path, text: str) -> None:
    with path.open("a") as f:
        f.write(text)


def as_user(user: pwd.struct_passwd, action, *args) -> None:
    """Run ``action(*args)`` in a child process that has become ``user`` (uid, gid, no other groups), as that
    learner's own shell would; fails the test if it raises."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)
            action(*args)
            code = 0
        except BaseException:  # noqa: BLE001 - reported, and the parent fails the test
            traceback.print_exc()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, f"{action.__name__} as {user.pw_name} failed"


def submit(klass, name: str, notebook=None, extra: dict[str, bytes] | None = None) -> Path:
    """``name`` submits their folder with nbgrader's own submit (``notebook`` and the ``extra`` files written into it
    first, if given); returns the folder it made in inbound."""
    home = klass["homes"][name]
    files = {**({} if notebook is None else {f"{A}.ipynb": nbformat.writes(notebook).encode()}), **(extra or {})}

    def run():  # nothing here imports: the learner cannot read this Python's standard library (under /root)
        for file, data in files.items():
            (home / A / file).write_bytes(data)
        os.chdir(home)
        ExchangeSubmit(coursedir=CourseDirectory(course_id=COURSE, assignment_id=A, root=str(home)),
                       authenticator=Authenticator(), root=str(klass["exchange"]), cache=str(home / "cache"),
                       assignment_dir=str(home)).start()
    before = set(klass["inbound"].iterdir())
    as_user(klass["users"][name], run)
    made, = set(klass["inbound"].iterdir()) - before
    return made


def forge(klass, name: str, folder_name: str, files: dict[str, bytes]) -> Path:
    """``name`` makes a submission folder by hand in inbound (a shell's mkdir and writes: no nbgrader)."""
    folder = klass["inbound"] / folder_name

    def run():
        folder.mkdir()
        for file, data in files.items():
            (folder / file).write_bytes(data)
    as_user(klass["users"][name], run)
    return folder


def stamp(when: datetime.datetime) -> str:
    return when.strftime(FORMAT)


def now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def solution(klass):
    return nbformat.read(klass["course"] / "notebooks" / A / f"{A}.ipynb", as_version=4)


def blank(klass) -> bytes:
    return (klass["course"] / "release" / A / f"{A}.ipynb").read_bytes()


def collected(klass, name: str) -> Path:
    return klass["course"] / "submitted" / name / A


def collected_at(klass, name: str) -> datetime.datetime:
    return datetime.datetime.strptime((collected(klass, name) / "timestamp.txt").read_text(), FORMAT)


def changed(folder: Path) -> datetime.datetime:
    """The latest change the filesystem recorded in ``folder`` (ctime), to the microsecond, as naive UTC."""
    ns = max(p.lstat().st_ctime_ns for p in [folder, *folder.rglob("*")])
    return datetime.datetime(1970, 1, 1) + datetime.timedelta(microseconds=ns // 1000)


def learners(klass) -> tuple[str, str, str]:
    return tuple(klass["users"])


def test_a_folder_made_under_a_classmate_s_name_is_refused(klass):
    """The attack a security review measured on nbgrader's collect: a blank notebook dropped into inbound under a
    classmate's name, dated later than the real one, was collected as the classmate's."""
    victim, attacker, _ = learners(klass)
    real = submit(klass, victim, solution(klass))
    later = stamp(now() + datetime.timedelta(minutes=5))
    forged = forge(klass, attacker, f"{victim}+{A}+{later}+forged",
                   {f"{A}.ipynb": blank(klass), "timestamp.txt": later.encode()})
    out = nbgrader("collect", A, cwd=klass["course"]).stdout
    assert (collected(klass, victim) / f"{A}.ipynb").read_bytes() == (real / f"{A}.ipynb").read_bytes()
    assert (collected(klass, victim) / f"{A}.ipynb").read_bytes() != blank(klass)
    uid, other = klass["users"][victim].pw_uid, klass["users"][attacker].pw_uid
    assert (f"Submission {forged} not collected: it is named for {victim} (uid {uid}) but was made by {attacker} "
            f"(uid {other}); cheating attempt?") in out
    assert sorted(p.name for p in (klass["course"] / "submitted").iterdir()) == [victim]


def test_a_file_put_into_a_classmate_s_folder_is_not_collected(klass):
    """nbgrader's submit leaves a submission folder writable by everyone: a learner who learns its name (inbound
    cannot be listed, and the name ends in 12 random characters) can replace a file in it. The replacement, owned by
    them, is not collected as the classmate's."""
    victim, attacker, _ = learners(klass)
    real = submit(klass, victim, solution(klass))
    (real / "helpers.py").write_text("")  # the victim's own extra file (made here as root: given to the victim)
    os.chown(real / "helpers.py", klass["users"][victim].pw_uid, klass["users"][victim].pw_gid)

    replacement = blank(klass)

    def replace():
        (real / f"{A}.ipynb").unlink()
        (real / f"{A}.ipynb").write_bytes(replacement)
    as_user(klass["users"][attacker], replace)
    out = nbgrader("collect", A, cwd=klass["course"]).stdout
    assert sorted(p.name for p in collected(klass, victim).iterdir()) == ["helpers.py", "submission_secret.txt",
                                                                          "timestamp.txt"]
    uid = klass["users"][attacker].pw_uid
    assert (f"Submitted file {real / f'{A}.ipynb'} is owned by {attacker} (uid {uid}), not by the submission's "
            f"owner: not collected") in out


@pytest.mark.parametrize("shared_uid", [False, True], ids=["own-uids", "one-uid"])
def test_a_hard_link_to_a_classmate_s_file_is_not_collected(klass, shared_uid):
    """A learner can hard-link a classmate's file they can read and write (fs.protected_hardlinks; any file they can
    reach without it) into a folder of their own; collect, as root, would copy its content. Between Unix users the
    link is the classmate's file (refused for its owner); under one uid shared by all (check_owner off, as on
    Kubernetes) it is refused for its second name."""
    victim, attacker, _ = learners(klass)
    if shared_uid:
        victim = attacker  # the classmate's file belongs to the same uid
    work = klass["root"] / "shared" / "work.ipynb"  # the classmate's work, left open to all
    work.parent.mkdir(mode=0o777)
    work.parent.chmod(0o777)
    nbformat.write(solution(klass), work)
    os.chown(work, klass["users"][victim].pw_uid, klass["users"][victim].pw_gid)
    work.chmod(0o666)
    when = stamp(now())
    folder = forge(klass, attacker, f"{attacker}+{A}+{when}+linked", {"timestamp.txt": when.encode()})
    as_user(klass["users"][attacker], os.link, work, folder / f"{A}.ipynb")
    out = nbgrader("collect", A, *(["--RegularFilesCollect.check_owner=False"] if shared_uid else []),
                   cwd=klass["course"]).stdout
    assert sorted(p.name for p in collected(klass, attacker).iterdir()) == ["timestamp.txt"]
    why = ("a hard link (2 names), which may be another's file" if shared_uid else
           f"owned by {victim} (uid {klass['users'][victim].pw_uid}), not by the submission's owner")
    assert f"Submitted file {folder / f'{A}.ipynb'} is {why}: not collected" in out


def test_a_student_id_that_is_no_unix_user_is_refused_unless_names_are_trusted(klass):
    learner = learners(klass)[0]
    when = stamp(now())
    folder = forge(klass, learner, f"nobody-here+{A}+{when}+x",
                   {f"{A}.ipynb": blank(klass), "timestamp.txt": when.encode()})
    out = nbgrader("collect", A, cwd=klass["course"]).stdout
    assert not (klass["course"] / "submitted").exists()
    assert (f"Submission {folder} not collected: the student id 'nobody-here' is no Unix user here, so who "
            f"submitted it cannot be checked (c.RegularFilesCollect.check_owner = False trusts names)") in out
    nbgrader("collect", A, "--RegularFilesCollect.check_owner=False", cwd=klass["course"])
    assert (collected(klass, "nobody-here") / f"{A}.ipynb").read_bytes() == blank(klass)


def test_a_timestamp_from_the_future_is_not_used(klass):
    """A future timestamp (in the folder's name and in timestamp.txt) neither makes an older submission the latest
    nor dates the one collected."""
    first, second, _ = learners(klass)
    future = stamp(now() + datetime.timedelta(days=1))
    forge(klass, first, f"{first}+{A}+{future}+early", {f"{A}.ipynb": blank(klass), "timestamp.txt": future.encode()})
    time.sleep(0.05)
    latest = submit(klass, first, solution(klass))
    alone = forge(klass, second, f"{second}+{A}+{future}+alone",
                  {f"{A}.ipynb": blank(klass), "timestamp.txt": future.encode()})
    out = nbgrader("collect", A, cwd=klass["course"]).stdout
    assert (collected(klass, first) / f"{A}.ipynb").read_bytes() == (latest / f"{A}.ipynb").read_bytes()
    assert collected_at(klass, first) == changed(latest)
    assert collected_at(klass, second) == changed(alone)
    assert f"Submission {alone} says it was submitted at {future}, after the server saw it last changed" in out


def test_back_dated_late_work_gets_the_late_penalty(klass):
    """The due date passes between two honest submits; the late learner then writes an earlier time into their
    timestamp.txt (their file, in a folder only they and nbgrader know the name of). nbgrader's autograde takes the
    submission's time from the collected timestamp.txt: it must be the server's, and the late penalty ('zero') apply."""
    late, on_time, _ = learners(klass)
    submit(klass, on_time, solution(klass))
    time.sleep(1)
    due = now()
    time.sleep(1)
    folder = submit(klass, late, solution(klass))
    claimed = stamp(due - datetime.timedelta(hours=1))
    as_user(klass["users"][late], (folder / "timestamp.txt").write_text, claimed)
    with Gradebook(f"sqlite:///{klass['course'] / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(A, duedate=due)
    append(klass["course"] / "nbgrader_config.py", 'c.LateSubmissionPlugin.penalty_method = "zero"\n')
    out = nbgrader("collect", A, cwd=klass["course"]).stdout
    assert f"Submission {folder} says it was submitted at {claimed}, but the server saw it last changed" in out
    assert collected_at(klass, late) == changed(folder)
    nbgrader("autograde", A, cwd=klass["course"])
    with Gradebook(f"sqlite:///{klass['course'] / 'gradebook.db'}") as gb:
        graded = {name: gb.find_submission(A, name) for name in (late, on_time)}
        results = {name: (s.score, s.late_submission_penalty, s.total_seconds_late > 0) for name, s in graded.items()}
        assert results == {late: (1, 1, True), on_time: (1, 0, False)}  # the penalty 'zero' takes the score
        assert graded[late].timestamp == changed(folder)


def test_one_learner_s_folder_cannot_stop_the_class_s_collect(klass):
    """On nbgrader's collect one learner's folder stopped the collect of the whole class: a name whose timestamp does
    not parse, or a folder over CourseDirectory.max_dir_size. Here the first is collected (its name's time is not
    read), the second refused with a warning, and the others are collected."""
    honest, garbled, big = learners(klass)
    real = submit(klass, honest, solution(klass))
    forge(klass, garbled, f"{garbled}+{A}+not-a-time+x", {f"{A}.ipynb": blank(klass)})
    large = forge(klass, big, f"{big}+{A}+{stamp(now())}+x", {f"{A}.ipynb": blank(klass), "data.bin": bytes(200_000)})
    out = nbgrader("collect", A, "--CourseDirectory.max_dir_size=100", cwd=klass["course"]).stdout
    assert (collected(klass, honest) / f"{A}.ipynb").read_bytes() == (real / f"{A}.ipynb").read_bytes()
    assert (collected(klass, garbled) / f"{A}.ipynb").read_bytes() == blank(klass)
    assert not collected(klass, big).exists()
    size = sum(p.stat().st_size for p in large.iterdir())
    assert (f"Submission {large} not collected: it holds {size} bytes, over CourseDirectory.max_dir_size "
            f"(100000 bytes)") in out


def test_a_learner_s_setuid_bit_is_not_copied_as_root(klass, tmp_path):
    """A learner may set the setuid bit on their own file; collect (as root) and autograde's copy of a submission's
    extra files make root-owned copies, which keep only the permission bits."""
    from tinylm_grading.submission import copy_regular_file
    learner = learners(klass)[0]
    when = stamp(now())
    folder = forge(klass, learner, f"{learner}+{A}+{when}+x", {"tool": b"#!/bin/sh\n", "timestamp.txt": when.encode()})
    as_user(klass["users"][learner], os.chmod, folder / "tool", 0o4755)
    assert stat.S_IMODE((folder / "tool").stat().st_mode) == 0o4755
    nbgrader("collect", A, cwd=klass["course"])
    assert stat.S_IMODE((collected(klass, learner) / "tool").stat().st_mode) == 0o755
    copy_regular_file(str(folder / "tool"), str(tmp_path / "tool"))
    assert stat.S_IMODE((tmp_path / "tool").stat().st_mode) == 0o755


def test_a_change_after_submitting_moves_the_submission_s_time(klass):
    """Collecting again (formgrader's collect updates) leaves an unchanged submission as it was collected; a change the
    learner makes in their submitted folder afterwards (a file edited, a file removed) dates it anew, so work changed
    after the due date is late."""
    learner = learners(klass)[0]
    folder = submit(klass, learner, solution(klass), {"notes.txt": b"draft"})
    times = []
    for change in (None, lambda: append(folder / f"{A}.ipynb", "\n"), (folder / "notes.txt").unlink):
        if change is not None:
            time.sleep(0.05)
            as_user(klass["users"][learner], change)
        nbgrader("collect", A, "--update", cwd=klass["course"])
        assert collected_at(klass, learner) == changed(folder)
        assert sorted(p.name for p in collected(klass, learner).iterdir()) == sorted(p.name for p in folder.iterdir())
        assert (collected(klass, learner) / f"{A}.ipynb").read_bytes() == (folder / f"{A}.ipynb").read_bytes()
        times.append(collected_at(klass, learner))
        inode = (collected(klass, learner) / "timestamp.txt").stat().st_ino
        nbgrader("collect", A, "--update", cwd=klass["course"])
        assert (collected(klass, learner) / "timestamp.txt").stat().st_ino == inode  # unchanged: not collected again
    assert times == sorted(set(times))


# ---------------------------------------------------------------- the exchange itself: no learner can take it over

def take_over(klass, name: str) -> None:
    """A security review's takeover of the course's folder, as ``name``'s shell would do it (mv, mkdir, cp): the
    course's folder ``exchange/tinylm`` renamed away, and one of theirs in its place, with the release's notebook and a
    cell of theirs on top (code a classmate who fetches it runs as themselves) and an ``inbound`` like nbgrader's. It
    stops at the first step the exchange refuses."""
    exchange, course = klass["exchange"], klass["exchange"] / COURSE
    nb = nbformat.read(course / "outbound" / A / f"{A}.ipynb", as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell("open('TROJAN_RAN', 'w').close()  # looks like setup"))
    trojan = nbformat.writes(nb).encode()

    def run():
        try:
            os.rename(course, exchange / ".tinylm-was-here")
        except PermissionError:
            return
        (course / "outbound" / A).mkdir(parents=True)
        (course / "outbound" / A / f"{A}.ipynb").write_bytes(trojan)
        (course / "inbound").mkdir()
        for folder, mode in ((course, 0o755), (course / "outbound", 0o755), (course / "outbound" / A, 0o755),
                             (course / "outbound" / A / f"{A}.ipynb", 0o644), (course / "inbound", 0o2733)):
            folder.chmod(mode)
    as_user(klass["users"][name], run)


def fetch(klass, name: str) -> Path:
    """``name`` fetches the release with nbgrader's own fetch_assignment, into a new folder of theirs; returns the
    notebook fetched."""
    into = klass["homes"][name] / "fetched"
    into.mkdir()
    os.chown(into, klass["users"][name].pw_uid, klass["users"][name].pw_gid)

    def run():
        os.chdir(into)
        ExchangeFetchAssignment(coursedir=CourseDirectory(course_id=COURSE, assignment_id=A, root=str(into)),
                                authenticator=Authenticator(), root=str(klass["exchange"]),
                                assignment_dir=str(into)).start()
    as_user(klass["users"][name], run)
    return into / A / f"{A}.ipynb"


def test_a_learner_cannot_hand_classmates_their_own_release(klass):
    """The review's attack a: with the course's folder theirs, a classmate's fetch_assignment got the attacker's
    notebook. The exchange's root has the sticky bit and the course's folder is root's: the rename is refused."""
    victim, attacker, _ = learners(klass)
    take_over(klass, attacker)
    fetched = fetch(klass, victim)
    assert fetched.read_bytes() == (klass["course"] / "release" / A / f"{A}.ipynb").read_bytes()
    assert (klass["exchange"] / COURSE).stat().st_uid == os.geteuid()
    assert not (klass["exchange"] / ".tinylm-was-here").exists()


def test_a_classmate_s_submission_reaches_the_instructor_only(klass):
    """The review's attack b: a classmate's submit landed in the attacker's inbound, who read it and removed it, and
    the instructor's collect had nothing of the classmate's. Here it lands in the instructor's inbound, which learners
    cannot list."""
    victim, attacker, _ = learners(klass)
    take_over(klass, attacker)
    folder = submit(klass, victim, solution(klass))
    stolen, inbound = klass["homes"][attacker] / "stolen.ipynb", klass["inbound"]

    def steal():
        try:
            names = os.listdir(inbound)
        except PermissionError:
            return
        for name in names:
            if name.startswith(victim + "+"):
                stolen.write_bytes((inbound / name / f"{A}.ipynb").read_bytes())
                shutil.rmtree(inbound / name)
    as_user(klass["users"][attacker], steal)
    nbgrader("collect", A, cwd=klass["course"])
    assert not stolen.exists()
    assert folder.parent == klass["exchange"] / COURSE / "inbound"
    assert folder.stat().st_uid == klass["users"][victim].pw_uid
    assert collected(klass, victim).is_dir(), "nothing of the classmate's was collected"
    assert (collected(klass, victim) / f"{A}.ipynb").read_bytes() == nbformat.writes(solution(klass)).encode()


def test_root_s_release_feedback_cannot_be_sent_onto_the_gradebook(klass):
    """The review's attack c: while root's release_feedback ran, a process of the attacker's (waiting on inotify)
    swapped the feedback folder root had just made for its own, where ``<hash>-tmp.html`` was a symlink to the course's
    gradebook: nbgrader's shutil.copy wrote the feedback page onto it. Here the course's folder and its feedback folder
    are root's, made before the class starts: the swap is refused, and the page is released where it belongs."""
    attacker = learners(klass)[1]
    take_over(klass, attacker)
    folder = submit(klass, attacker, solution(klass))
    checksum = notebook_hash(secret=(folder / "submission_secret.txt").read_text(), notebook_id=A)
    exchange, course, home = klass["exchange"], klass["exchange"] / COURSE, klass["homes"][attacker]
    prepared, gradebook = exchange / "fbprep", klass["gradebook"]

    def plant():  # the folder to swap in, made where the attacker may write (the exchange's root), and its watcher
        prepared.mkdir()
        (prepared / f"{checksum}-tmp.html").symlink_to(gradebook)
        if os.fork() == 0:
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                watch = libc.inotify_init1(0)
                libc.inotify_add_watch(watch, str(course).encode(), 0x100)  # IN_CREATE
                (home / "watching").write_text(str(os.getpid()))
                while True:
                    feedback = course / "feedback"
                    if feedback.is_dir() and not feedback.is_symlink():
                        try:
                            os.rename(feedback, course / "feedback.root")
                            os.rename(prepared, feedback)
                            (home / "swapped").write_text("")
                        except PermissionError:
                            (home / "refused").write_text("")
                        break
                    select.select([watch], [], [], 5)
                    os.read(watch, 4096)
            finally:
                os._exit(0)
    as_user(klass["users"][attacker], plant)
    for _ in range(100):
        if (home / "watching").exists():
            break
        time.sleep(0.05)
    watcher = int((home / "watching").read_text())
    try:
        for command in ("collect", "autograde", "generate_feedback", "release_feedback"):
            nbgrader(command, A, cwd=klass["course"])
    finally:
        try:
            os.kill(watcher, 9)
        except ProcessLookupError:
            pass
    assert gradebook.read_bytes().startswith(b"SQLite format 3\0")
    assert sorted(p.name for p in home.iterdir() if p.name in ("swapped", "refused")) == ["refused"]
    page = course / "feedback" / f"{checksum}.html"
    st = page.lstat()
    assert stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == 0o644
    assert page.read_bytes() == (klass["course"] / "feedback" / attacker / A / f"{A}.html").read_bytes()


def test_a_learner_cannot_rename_or_remove_a_classmate_s_submission(klass):
    """nbgrader's inbound (2733) let a learner who knew a classmate's folder's name rename it (to their own name, or out
    of the way) or remove it; with the sticky bit only its owner and the instructor can."""
    victim, attacker, _ = learners(klass)
    folder = submit(klass, victim, solution(klass))
    outcome = klass["homes"][attacker] / "outcome"
    moves = [(os.rename, folder, klass["inbound"] / f"{attacker}+{A}+{stamp(now())}+mine"),
             (os.rename, folder, klass["exchange"] / "hidden"), (os.rmdir, folder)]

    def attack():
        results = []
        for move, *args in moves:
            try:
                move(*args)
                results.append("done")
            except OSError as e:
                results.append(type(e).__name__)
        outcome.write_text(" ".join(results))
    as_user(klass["users"][attacker], attack)
    assert outcome.read_text() == "PermissionError PermissionError PermissionError"
    nbgrader("collect", A, cwd=klass["course"])
    assert (collected(klass, victim) / f"{A}.ipynb").read_bytes() == (folder / f"{A}.ipynb").read_bytes()


def _chown_to_learner(klass, path: Path) -> str:
    user = klass["users"][learners(klass)[1]]
    os.chown(path, user.pw_uid, user.pw_gid)
    return f"{path} belongs to {user.pw_name} (uid {user.pw_uid}), not to root"


def _symlinked(path: Path) -> str:
    path.rename(path.with_name(path.name + ".real"))
    path.symlink_to(path.with_name(path.name + ".real"))
    return f"{path} is a symlink"


def _open(path: Path, mode: int, sticky: bool) -> str:
    path.chmod(mode)
    return f"others may write in {path}" + (f" and it has no sticky bit (chmod +t {path} sets it)" if sticky else "")


COLLECT, RELEASE, FEEDBACK = ("collect", A), ("release_assignment", A, "--force"), ("release_feedback", A)


@pytest.mark.parametrize("spoil, commands", [
    pytest.param(lambda k: _open(k["exchange"], 0o777, True), [COLLECT, FEEDBACK], id="root-without-sticky-bit"),
    pytest.param(lambda k: _chown_to_learner(k, k["exchange"] / COURSE), [COLLECT, RELEASE, FEEDBACK],
                 id="course-folder-a-learner-s"),
    pytest.param(lambda k: _symlinked(k["exchange"] / COURSE), [COLLECT, RELEASE, FEEDBACK],
                 id="course-folder-a-symlink"),
    pytest.param(lambda k: _open(k["inbound"], 0o2733, True), [COLLECT], id="inbound-without-sticky-bit"),
    pytest.param(lambda k: _symlinked(k["inbound"]), [COLLECT, RELEASE], id="inbound-a-symlink"),
    pytest.param(lambda k: _open(k["exchange"] / COURSE / "outbound", 0o777, False), [RELEASE], id="outbound-open"),
    pytest.param(lambda k: _symlinked(k["exchange"] / COURSE / "feedback"), [FEEDBACK], id="feedback-a-symlink"),
    pytest.param(lambda k: _open(k["exchange"] / COURSE / "feedback", 0o733, False), [FEEDBACK], id="feedback-open"),
])
def test_the_instructor_s_commands_refuse_an_exchange_others_could_change(klass, spoil, commands):
    """Defense in depth, were the exchange laid out otherwise (by hand, or by an earlier ``make class``): collect,
    release_assignment and release_feedback refuse to work, with one line naming the folder and why, where someone
    else could change a folder they work in (nbgrader's checked only who owns a folder that was there already,
    following symlinks)."""
    why = spoil(klass)
    for command in commands:
        with pytest.raises(AssertionError) as failed:
            nbgrader(*command, cwd=klass["course"])
        assert (f"Not working in nbgrader's exchange: {why}, so someone else could put what they want where this "
                f"command reads and writes (docs/grading.md, the exchange)") in str(failed.value), command


def test_release_feedback_follows_no_symlink_in_its_own_folder(klass):
    """Even in a feedback folder of the instructor's: a symlink at ``<hash>-tmp.html`` (where nbgrader's shutil.copy
    wrote) is not followed; the page is a new file, renamed into place."""
    learner = learners(klass)[0]
    folder = submit(klass, learner, solution(klass))
    checksum = notebook_hash(secret=(folder / "submission_secret.txt").read_text(), notebook_id=A)
    feedback = klass["exchange"] / COURSE / "feedback"
    (feedback / f"{checksum}-tmp.html").symlink_to(klass["gradebook"])
    for command in ("collect", "autograde", "generate_feedback", "release_feedback"):
        nbgrader(command, A, cwd=klass["course"])
    assert klass["gradebook"].read_bytes().startswith(b"SQLite format 3\0")
    page = feedback / f"{checksum}.html"
    assert stat.S_ISREG(page.lstat().st_mode) and stat.S_IMODE(page.lstat().st_mode) == 0o644
    assert page.read_bytes() == (klass["course"] / "feedback" / learner / A / f"{A}.html").read_bytes()
    assert sorted(p.name for p in feedback.iterdir()) == [f"{checksum}-tmp.html", f"{checksum}.html"]


def test_release_gives_nbgrader_s_exchange_the_sticky_bits(generated, tmp_path):
    """An exchange made as nbgrader documents it (its root 0777; release_assignment makes the course's folders, inbound
    2733): release_assignment gives the root and inbound the sticky bit, and collect then works in it."""
    course = tmp_path / "course"
    shutil.copytree(generated, course)
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    append(course / "nbgrader_config.py", f"\nc.Exchange.root = {str(exchange)!r}\n")
    nbgrader("release_assignment", A, cwd=course)
    modes = {str(p.relative_to(tmp_path)): oct(stat.S_IMODE(p.stat().st_mode))
             for p in [exchange, *(exchange / COURSE).iterdir()]}
    assert modes == {"exchange": oct(0o1777), "exchange/tinylm/outbound": oct(0o755),
                     "exchange/tinylm/inbound": oct(0o3733)}
    out = nbgrader("collect", A, cwd=course).stdout
    assert "No submissions of '00_setup' for course 'tinylm' to collect" in out


def test_make_class_lays_out_the_exchange_and_refuses_a_learner_s_course_folder(users):
    """hubclass.exchange: the folders and modes of a new exchange, each root's; on a class folder whose exchange was
    open to all (the earlier layout) where a learner made the course's folder, it refuses, naming the folder and its
    owner, and changes nothing."""
    from tinylm_checks._text import say
    from tinylm_solutions.cli import UsageError
    root = Path(tempfile.mkdtemp(prefix="tinylm-exchange-"))
    try:
        root.chmod(0o755)
        hubclass.exchange(root)
        made = {str(p.relative_to(root)): (oct(stat.S_IMODE(p.lstat().st_mode)), p.lstat().st_uid)
                for p in [root / "exchange", *(root / "exchange").rglob("*")]}
        me = os.geteuid()
        assert made == {"exchange": (oct(0o1777), me), "exchange/tinylm": (oct(0o755), me),
                        "exchange/tinylm/outbound": (oct(0o755), me), "exchange/tinylm/inbound": (oct(0o3733), me),
                        "exchange/tinylm/feedback": (oct(0o711), me)}
        shutil.rmtree(root / "exchange")
        (root / "exchange").mkdir()
        (root / "exchange").chmod(0o777)
        learner = users[next(iter(users))]
        as_user(learner, os.mkdir, root / "exchange" / COURSE)
        with pytest.raises(UsageError) as refused:
            hubclass.exchange(root)
        assert str(refused.value) == say("grading.class.exchange_not_yours", folder=root / "exchange" / COURSE,
                                         owner=learner.pw_name)
        assert stat.S_IMODE((root / "exchange").stat().st_mode) == 0o777  # unchanged: the modes come last
        assert os.listdir(root / "exchange" / COURSE) == []
    finally:
        shutil.rmtree(root)
