"""nbgrader's exchange knows who submitted (tinylm_grading.submission.RegularFilesCollect), with real Unix users.

Each learner is a throwaway Unix user (made with useradd, removed afterwards). A learner's side runs in a child of this
process that has dropped to that user's uid: the honest submit is nbgrader's own ``ExchangeSubmit``; the attacks are
what a learner can do with a shell, with no nbgrader (make a folder in ``inbound``, which learners may write to, write
a file, make a hard link). The instructor's side is the real ``nbgrader collect`` (and ``autograde``) as root, with the
course's nbgrader_config.py. The attacks:

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

import datetime
import os
import pwd
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
from nbgrader.exchange.default.submit import ExchangeSubmit  # imported here: a learner's child cannot read the stdlib

from nbgrader_cli import nbgrader

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
    (open to all, as nbgrader asks) with stage 00 released, and a home per learner with the release fetched."""
    root = Path(tempfile.mkdtemp(prefix="tinylm-exchange-"))
    root.chmod(0o755)
    course = root / "course"
    shutil.copytree(generated, course)
    course.chmod(0o700)
    exchange = root / "exchange"
    exchange.mkdir(mode=0o777)
    exchange.chmod(0o777)
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
           "homes": homes, "users": users}
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
