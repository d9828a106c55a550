"""Copy a learner's submission for grading without following the symlinks in it; collect it from the exchange only
from the learner it names, dated by the server's clock (:class:`RegularFilesCollect`).

``nbgrader autograde`` copies every extra file of ``submitted/<student>/<assignment>/`` into
``autograded/`` with ``shutil.copy``, which follows symlinks. A learner who submits a symlink
``x -> ../../../gradebook.db`` (or to another learner's notebook, or to the source notebook) gets that
file copied into their autograded folder, where their notebook's kernel can read it; a symlink to
``/dev/zero`` would fill the disk. nbgrader's ``collect`` (``shutil.copytree``) follows symlinks in the
exchange's inbound folder the same way, as the instructor.

Here only regular files are copied. A symlink (to a file or a folder), a FIFO, a device or a socket is
skipped and named in a warning; the submitted files themselves are never changed. A notebook that is
not a regular file, or is reached through a symlinked folder, is not graded: it scores 0 like a missing
notebook.

nbgrader builds its ``Autograde`` converter by name in ``nbgrader.apps.autogradeapp``;
:func:`install` (called from ``nbgrader_config.py``) points that name at :class:`RegularFilesAutograde`.
The exchange's collect step is configured with ``c.ExchangeFactory.collect``: :class:`RegularFilesCollect`, which
also refuses a folder in ``inbound`` that a learner made under another's name and dates each submission by the
filesystem's record of its last change, not by the ``timestamp.txt`` a learner writes.

The instructor's three commands that write in the exchange or read from it (``release_assignment``, ``collect``,
``release_feedback``: :class:`TrustedReleaseAssignment`, :class:`RegularFilesCollect`, :class:`TrustedReleaseFeedback`)
first check that no one else can change the folders they work in (:func:`exchange_problem`) and refuse to work
otherwise. nbgrader's checked only who owns a folder that was already there, following symlinks: a learner who
renamed the course's folder away (the exchange's root is writable by all) and put their own in its place received the
classmates' submissions, handed them their own notebook to fetch, and had ``release_feedback``, run as root, write
through a symlink of theirs onto the gradebook.
"""
from __future__ import annotations

import datetime
import glob
import os
import pwd
import re
import shutil
import stat
import tempfile

from nbgrader.api import Gradebook
from nbgrader.converters import Autograde, BaseConverter
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.release_assignment import ExchangeReleaseAssignment
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.utils import ignore_patterns, is_ignored, notebook_hash, parse_utc, remove
from traitlets import Bool

# A learner's timestamp.txt further than this from the server's time (seconds) is named in collect's warnings.
CLAIM_TOLERANCE = 60
# How deep a submission's folders may nest (nbgrader's own need a few levels).
MAX_DEPTH = 32
# nbgrader's timestamp format (Exchange.timestamp_format) as a learner's submit writes it: 2024-05-01 12:00:00.123 UTC
CLAIM_FORMAT = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?( [A-Za-z]{1,6}| [+-]\d{4})?")


def _kind(path: str) -> str | None:
    """None for a regular file (not a symlink), else what it is: 'a symlink', 'a FIFO', ..."""
    mode = os.lstat(path).st_mode
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return f"a symlink to {os.readlink(path)!r}"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def copy_regular_file(src: str, dest: str) -> None:
    """Copy ``src`` to ``dest`` (contents and mode bits) without following a symlink at ``src``.
    Raises OSError when ``src`` is a symlink (ELOOP) or ValueError when it is not a regular file."""
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fsrc:
        st = os.fstat(fsrc.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{src} is not a regular file")
        with open(dest, "wb") as fdst:
            shutil.copyfileobj(fsrc, fdst)
    os.chmod(dest, stat.S_IMODE(st.st_mode) & 0o777)  # a learner's setuid bit is not copied as the instructor


def regular_files(root: str, exclude: list[str], log) -> list[str]:
    """The regular files under ``root`` (as nbgrader's ``find_all_files``, same ``exclude`` globs), not
    following symlinks; each symlink or special file met is named in a warning and left out."""
    files, to_skip = [], []
    for dirname, dirnames, filenames in os.walk(root):  # os.walk does not descend into symlinked folders
        if is_ignored(dirname, exclude) or dirname in to_skip:
            to_skip.extend(os.path.join(dirname, x) for x in dirnames)
            continue
        for name in dirnames + filenames:
            path = os.path.join(dirname, name)
            if name in dirnames and not os.path.islink(path):
                continue
            if is_ignored(path, exclude):
                continue
            kind = _kind(path)
            if kind is None:
                files.append(path)
            else:
                log.warning("Submitted file %s is %s: not copied for grading", path, kind)
    return files


class _RegularFilesCopy(BaseConverter):
    """``BaseConverter.init_assignment`` (copy the submission's extra files), for regular files only."""

    def init_assignment(self, assignment_id: str, student_id: str) -> None:
        source = self._format_source(assignment_id, student_id)
        dest = self._format_dest(assignment_id, student_id)
        if self._through_symlink(source):
            self.log.warning("Submission folder %s is reached through a symlink: nothing in it is copied", source)
            return
        for filename in regular_files(source, self.coursedir.ignore + ["*.ipynb"], self.log):
            path = os.path.join(dest, os.path.relpath(filename, source))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if os.path.lexists(path):
                remove(path)
            self.log.info("Copying %s -> %s", filename, path)
            try:
                copy_regular_file(filename, path)
            except (OSError, ValueError) as e:  # changed under us: not a regular file any more
                self.log.warning("Submitted file %s not copied for grading: %s", filename, e)

    def _through_symlink(self, path: str) -> bool:
        """Is ``path``, or a folder between the submitted directory's root and it, a symlink?"""
        top = os.path.abspath(self.coursedir.format_path(self._input_directory, ".", "."))
        path = os.path.abspath(path)
        while path.startswith(top + os.sep):
            if os.path.islink(path):
                return True
            path = os.path.dirname(path)
        return False


class RegularFilesAutograde(Autograde, _RegularFilesCopy):
    """nbgrader's ``Autograde``, copying only the submission's regular files (symlinks and special files
    are skipped, with a warning naming each), and grading only notebooks that are regular files reached
    without a symlink; any other submitted notebook scores 0, as a missing one does."""

    # MRO: RegularFilesAutograde, Autograde, _RegularFilesCopy, BaseConverter: the super() call inside
    # Autograde.init_assignment reaches _RegularFilesCopy.init_assignment.

    def init_assignment(self, assignment_id: str, student_id: str) -> None:
        super().init_assignment(assignment_id, student_id)
        refused = [nb for nb in self.notebooks if self._through_symlink(nb) or _kind(nb) is not None]
        if not refused:
            return
        self.notebooks = [nb for nb in self.notebooks if nb not in refused]
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            for path in refused:
                kind = "reached through a symlinked folder" if self._through_symlink(path) else _kind(path)
                self.log.warning("Submitted notebook %s is %s: not graded, it scores 0", path, kind)
                name = os.path.splitext(os.path.basename(path))[0]
                for grade in gb.find_submission_notebook(name, assignment_id, student_id).grades:
                    grade.auto_score = 0
                    grade.needs_manual_grade = False
            gb.db.commit()


def exchange_problem(root: str, course_id: str, folders: tuple[str, ...], groupshared: bool = False) -> str | None:
    """Why the user running an instructor's nbgrader command cannot trust the exchange's folders of course
    ``course_id``, or None. ``root`` is the exchange's root, resolved (no symlink in it); ``folders`` names folders of
    the course's (``""``: the course's folder itself, ``"inbound"``, ``"outbound"``, ``"feedback"``).

    Trusted: every folder from ``/`` to ``root`` belongs to root or to this user, and one that others may write in has
    the sticky bit (none of them can then rename what is not theirs: the course's folder). The course's folders are
    folders (not symlinks) of this user's that no one else may write in, except ``inbound``, where learners make their
    submissions' folders: it must have the sticky bit, so that none can rename or remove another's. With nbgrader's
    ``groupshared``, the course's instructors share a group: its members may own the course's folders and write in
    them. A course folder that is not there is no problem here (nbgrader says so, or makes it)."""
    me, groups = os.geteuid(), {os.getegid(), *os.getgroups()}
    others = stat.S_IWOTH | (0 if groupshared else stat.S_IWGRP)
    chain = [root]
    while chain[-1] != os.path.dirname(chain[-1]):
        chain.append(os.path.dirname(chain[-1]))
    course = os.path.join(root, course_id)
    for path in [*reversed(chain), *(os.path.join(course, name) if name else course for name in folders)]:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        mode, inside = st.st_mode, path not in chain
        if stat.S_ISLNK(mode):
            return f"{path} is a symlink"
        if not stat.S_ISDIR(mode):
            return f"{path} is not a folder"
        if st.st_uid not in ({me} if inside else {me, 0}) and not (inside and groupshared and st.st_gid in groups):
            return (f"{path} belongs to {_user(st.st_uid)} (uid {st.st_uid}), not to "
                    f"{_user(me) if inside else 'root or ' + _user(me)}")
        if mode & others and not (mode & stat.S_ISVTX and (not inside or os.path.basename(path) == "inbound")):
            if not inside or os.path.basename(path) == "inbound":
                return f"others may write in {path} and it has no sticky bit (chmod +t {path} sets it)"
            return f"others may write in {path}"
    return None


class _TrustedExchange:
    """An instructor's exchange command that works only in an exchange no one else can change under it."""

    def check_exchange(self, *folders: str) -> None:
        """Resolve the exchange's root (nbgrader then works on that path: no symlink on the way is read again), and
        fail (one line on the log, then nbgrader's ExchangeError) when :func:`exchange_problem` finds a folder of the
        course's (``folders``: ``""``, ``"inbound"``, ...) or one above it that someone else could change."""
        self.root = os.path.realpath(self.root)
        problem = exchange_problem(self.root, self.coursedir.course_id, folders, self.coursedir.groupshared)
        if problem:
            self.fail(f"Not working in nbgrader's exchange: {problem}, so someone else could put what they want where "
                      f"this command reads and writes (docs/grading.md, the exchange)")

    def add_sticky_bit(self, path: str) -> None:
        """Give the folder ``path``, if it is this user's and everyone may write in it, the sticky bit: nbgrader makes
        the exchange's root and a course's ``inbound`` without it, and anyone could then rename or remove what another
        put there (the course's folder, a classmate's submission). Not through a symlink."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            return  # a symlink, or not there: exchange_problem names it
        try:
            mode = os.fstat(fd).st_mode
            if os.fstat(fd).st_uid == os.geteuid() and mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
                os.fchmod(fd, stat.S_IMODE(mode) | stat.S_ISVTX)
                self.log.info("Sticky bit set on %s: no one can rename or remove what is not theirs in it", path)
        finally:
            os.close(fd)


class TrustedReleaseAssignment(_TrustedExchange, ExchangeReleaseAssignment):
    """nbgrader's ``release_assignment`` (``c.ExchangeFactory.release_assignment``), in an exchange no learner can
    change: the exchange's root and the course's ``inbound`` get the sticky bit nbgrader leaves out (nbgrader makes the
    root 0777 when its permissions are not, and ``inbound`` 2733), and it refuses to work when the course's folder,
    ``outbound`` or ``inbound`` is not this user's, is a symlink, or someone else may write in it
    (:func:`exchange_problem`)."""

    def ensure_root(self):
        super().ensure_root()
        self.add_sticky_bit(self.root)

    def init_dest(self):
        self.check_exchange("")
        super().init_dest()  # makes what is missing, with nbgrader's modes
        self.add_sticky_bit(self.inbound_path)
        self.check_exchange("", "outbound", "inbound")


class TrustedReleaseFeedback(_TrustedExchange, ExchangeReleaseFeedback):
    """nbgrader's ``release_feedback`` (``c.ExchangeFactory.release_feedback``), which refuses to work when the
    course's folder or its ``feedback`` folder is not this user's, is a symlink, or someone else may write in it
    (:func:`exchange_problem`; nbgrader's checked the owner of ``feedback`` only when it was there already, following
    symlinks), and never writes through a symlink: each page is written to a new file of a random name in
    ``feedback`` and renamed to ``<hash>.html`` (nbgrader's ``shutil.copy`` to ``<hash>-tmp.html`` followed a symlink
    put there)."""

    def init_dest(self):
        self.check_exchange("")
        super().init_dest()  # makes feedback/ if missing, with nbgrader's mode (0711)
        self.check_exchange("", "feedback")

    def copy_files(self):
        """nbgrader's: each student's feedback pages (``feedback/<student>/<assignment>/<notebook>.html``) to
        ``<hash of the submission's secret and the notebook>.html`` in the exchange, readable by all (learners find
        theirs by its name: the folder cannot be listed)."""
        excluded = set(filter(None, (self.coursedir.student_id_exclude or "").split(",")))
        pattern = re.escape(os.path.sep).join([
            self.coursedir.format_path(self.coursedir.feedback_directory, "(?P<student_id>.*)",
                                       self.coursedir.assignment_id, escape=True),
            "(?P<notebook_id>.*).html"])
        for html_file in glob.glob(os.path.join(self.src_path, "*.html")):
            found = re.match(pattern, html_file)
            if found is None:
                self.log.error("Could not match '%s' with regexp '%s'", html_file, pattern)
                continue
            student_id, notebook_id = found["student_id"], found["notebook_id"]
            if student_id in excluded:
                continue
            folder = os.path.dirname(html_file)
            with open(os.path.join(folder, "timestamp.txt")) as f:
                timestamp = f.read()
            with open(os.path.join(folder, "submission_secret.txt")) as f:
                checksum = notebook_hash(secret=f.read(), notebook_id=notebook_id)
            self.log.info("Releasing feedback for student '%s' on assignment '%s/%s/%s' (%s)", student_id,
                          self.coursedir.course_id, self.coursedir.assignment_id, notebook_id, timestamp)
            dest = os.path.join(self.dest_path, f"{checksum}.html")
            fd, new = tempfile.mkstemp(suffix="-tmp.html", dir=self.dest_path)  # O_EXCL: a new file, no link followed
            try:
                with os.fdopen(fd, "wb") as out, open(html_file, "rb") as page:
                    shutil.copyfileobj(page, out)
                    os.fchmod(out.fileno(), 0o644)
                os.replace(new, dest)  # a rename replaces whatever is at dest, a symlink included, never follows it
            except BaseException:
                os.unlink(new)
                raise
            self.log.info("Feedback released to: %s", dest)


class RegularFilesCollect(_TrustedExchange, ExchangeCollect):
    """nbgrader's exchange ``collect``, taking a submission only from the learner it names, dated by the server's
    clock, and copying only the learner's own regular files.

    nbgrader's ``collect`` believes the folder's name (``<student>+<assignment>+<timestamp>+<random>``): a learner
    who drops a folder named after a classmate into ``inbound`` (write-only for learners, but writable) with a later
    timestamp has it collected as the classmate's (nbgrader only warns "cheating attempt?"), and ``timestamp.txt``,
    which the learner writes, decides lateness. Here:

    - **Who**: a folder is taken only if its owner (the uid that made it; no learner can make one owned by another) is
      the uid of the Unix user named by the student id; any other is refused with a warning naming both and is never
      "the latest". A student id that is no Unix user here is refused too, unless ``check_owner`` is off (learners
      who are not Unix users, or who share one uid: the exchange then trusts names). Inside the folder, only regular
      files with one link, owned by the folder's owner, are copied: a classmate's file hard-linked in (a learner can
      link any file they can read and write), a file put there by another user, a symlink or a special file is left
      out with a warning. The folder is read through file descriptors opened without following symlinks, so swapping
      an entry while it is copied reaches nothing else.
    - **When**: a submission's time is the latest change the filesystem recorded in it (the ``ctime`` of the folder
      and of every entry: no user can set it back, and writing a file, linking, renaming or ``touch`` moves it to
      now), taken while it is copied. It chooses the latest submission (and the one before the due date with
      ``--before-duedate``), and the collected ``timestamp.txt`` holds it, so nbgrader's autograde records it in the
      gradebook and its late penalties follow it. The learner's ``timestamp.txt`` and the name's timestamp are not
      used; one more than :data:`CLAIM_TOLERANCE` seconds away from the server's time (in the future, or back-dated,
      or work changed after it was submitted) is named in a warning.
    - **Where**: it works only in an exchange where no one else can change the course's folder or ``inbound``
      (:func:`exchange_problem`), and refuses to otherwise, with one line saying which folder and why.
    - **Nothing one learner submits stops the collect of the others** (nbgrader's stopped at a name whose timestamp
      does not parse, or a folder over ``max_dir_size``): the name's time is not read; a folder over
      ``max_dir_size``, nested deeper than :data:`MAX_DEPTH`, that is not a folder or cannot be read is refused with a
      warning (an earlier submission of that learner may then be the latest), and collect goes on.
    """

    check_owner = Bool(True, help=(
        "Take a submission only from the Unix user its student id names (the owner of its folder in the exchange); "
        "a student id that is no Unix user here is refused. Turn it off only where learners are not Unix users of "
        "this machine, or share one uid (Kubernetes): the exchange then trusts the names in it.")).tag(config=True)

    def init_src(self):
        """nbgrader's ``init_src`` (the latest submission of each student, or the latest before the due date), over
        the records of :meth:`_path_to_record`; the refused ones are then dropped. Fails first (ExchangeError) when
        someone else could change the course's folder or ``inbound`` (:meth:`check_exchange`)."""
        self.check_exchange("", "inbound")
        super().init_src()
        self.src_records = [r for r in self.src_records if "uid" in r]
        self._owners = {os.path.join(self.inbound_path, r["filename"]): r["uid"] for r in self.src_records}

    def _path_to_record(self, path):
        """The record :meth:`_vet` makes of the folder ``path``; for a folder it refuses, one that stands alone in a
        group of its own (never the latest of a student: :meth:`init_src` drops it). nbgrader's stopped the collect at
        a name whose timestamp did not parse."""
        return self._vet(path) or {"username": ("refused", path), "filename": os.path.basename(path),
                                   "timestamp": datetime.datetime.min}

    def _vet(self, path: str) -> dict | None:
        """The record of the submission folder ``path`` (student, folder name, uid of its owner, its server time),
        or None, with a warning saying why, when it is not taken: not a folder, a name that does not parse, too
        large or too deep, or (``check_owner``) an owner that is not the Unix user the name gives."""
        name = os.path.basename(path)
        parts = name.rsplit("+", 3)
        try:
            st = os.lstat(path)
            if len(parts) < 3 or not parts[0] or parts[1] != self.coursedir.assignment_id:
                raise ValueError("its name is not <student>+<assignment>+<timestamp>+<random>")
            if not stat.S_ISDIR(st.st_mode):
                raise ValueError(f"it is {_kind(path)}, not a folder")
            student = parts[0]
            if self.check_owner:
                try:
                    uid = pwd.getpwnam(student).pw_uid
                except KeyError:
                    raise ValueError(f"the student id {student!r} is no Unix user here, so who submitted it cannot "
                                     f"be checked (c.RegularFilesCollect.check_owner = False trusts names)") from None
                if st.st_uid != uid:
                    raise ValueError(f"it is named for {student} (uid {uid}) but was made by {_user(st.st_uid)} "
                                     f"(uid {st.st_uid}); cheating attempt?")
            ctime_ns, size = scan(path)
            if size > 1000 * self.coursedir.max_dir_size:
                raise ValueError(f"it holds {size} bytes, over CourseDirectory.max_dir_size "
                                 f"({1000 * self.coursedir.max_dir_size} bytes)")
        except (OSError, ValueError) as e:
            self.log.warning("Submission %s not collected: %s", path, e)
            return None
        return {"username": student, "filename": name, "uid": st.st_uid, "timestamp": utc(ctime_ns)}

    def do_copy(self, src, dest, log=None):
        """Copy the submission folder ``src`` to ``dest``: its regular files with one link, owned by its owner
        (``coursedir.ignore``, ``include`` and ``max_file_size`` apply, as in nbgrader's), each read through a
        descriptor opened without following symlinks; anything else is named in a warning. For a folder this
        collect chose (:meth:`init_src`), ``dest/timestamp.txt`` then holds its server time, and a learner's
        timestamp that differs from it is named. A folder that cannot be copied whole (a symlink, another owner than
        :meth:`init_src` saw, over ``max_dir_size``, unreadable) is not collected: an error names it and ``dest`` is
        removed. Raises nothing for what a learner submits."""
        chosen = src in getattr(self, "_owners", {})
        try:
            top = os.open(src, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError as e:
            kind = f"a symlink to {os.readlink(src)!r}" if os.path.islink(src) else f"not readable ({e})"
            self.log.error("Submission %s is %s: not collected", src, kind)
            return
        try:
            owner = os.fstat(top).st_uid
            if chosen and owner != self._owners[src]:
                raise ValueError(f"its owner changed to uid {owner} since it was chosen")
            copied = _FolderCopy(self, owner, 1000 * self.coursedir.max_dir_size)
            copied.copy(top, src, dest, skip_timestamp=chosen)
            if chosen:  # what was copied, each ctime taken after the read; and what was not, counted as _vet counts
                self._date(top, src, dest, owner, utc(max(copied.ctimes_ns + [_scan(top, 0)[0]])))
        except (OSError, ValueError) as e:
            self.log.error("Submission %s not collected: %s", src, e)
            shutil.rmtree(dest, ignore_errors=True)
            return
        finally:
            os.close(top)
        if self.coursedir.groupshared:  # as nbgrader's do_copy: group members may read and write
            for dirname, _, filenames in os.walk(dest):
                os.chmod(dirname, (os.stat(dirname).st_mode | 0o2770) & 0o2777)
                for filename in filenames:
                    path = os.path.join(dirname, filename)
                    os.chmod(path, (os.stat(path).st_mode | 0o660) & 0o777)

    def _date(self, top: int, src: str, dest: str, owner: int, when: datetime.datetime) -> None:
        """Write ``when`` (the server's time) to ``dest/timestamp.txt``; warn when the learner's own timestamp.txt in
        ``src`` (descriptor ``top``) is missing or more than :data:`CLAIM_TOLERANCE` seconds away from it."""
        with open(os.path.join(dest, "timestamp.txt"), "w") as f:
            f.write(_shown(when))
        try:
            fd = os.open("timestamp.txt", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=top)
            with os.fdopen(fd, "rb") as f:
                st = os.fstat(f.fileno())
                if not stat.S_ISREG(st.st_mode) or st.st_uid != owner:
                    raise ValueError("not the learner's regular file")
                text = f.read(100).decode().strip()
                if not CLAIM_FORMAT.fullmatch(text):
                    raise ValueError(text)
                claimed = parse_utc(text)
        except (OSError, ValueError, OverflowError, UnicodeDecodeError):  # dateutil's errors are ValueErrors
            self.log.warning("Submission %s has no timestamp.txt nbgrader can read: dated by the server's clock, %s",
                             src, _shown(when))
            return
        if claimed > when + datetime.timedelta(seconds=CLAIM_TOLERANCE):
            self.log.warning("Submission %s says it was submitted at %s, after the server saw it last changed (%s): "
                             "a timestamp from the future, not used", src, _shown(claimed), _shown(when))
        elif claimed < when - datetime.timedelta(seconds=CLAIM_TOLERANCE):
            self.log.warning("Submission %s says it was submitted at %s, but the server saw it last changed at %s "
                             "(back-dated, or changed after it was submitted): dated %s", src, _shown(claimed),
                             _shown(when), _shown(when))


class _FolderCopy:
    """One submission folder's copy (:meth:`RegularFilesCollect.do_copy`): what it skips is logged on ``collect``'s
    log; ``ctimes_ns`` gathers the ctime of every entry met, each file's taken after it was read."""

    def __init__(self, collect: RegularFilesCollect, owner: int, budget: int):
        self.log, self.owner, self.budget, self.ctimes_ns = collect.log, owner, budget, []
        coursedir = collect.coursedir
        self.ignore = ignore_patterns(exclude=coursedir.ignore, include=coursedir.include,
                                      max_file_size=coursedir.max_file_size, log=collect.log)
        self.max_file_size = 1000 * coursedir.max_file_size

    def copy(self, dir_fd: int, path: str, dest: str, skip_timestamp: bool = False, depth: int = 0) -> None:
        """Copy the folder open as ``dir_fd`` (at ``path``) to ``dest``, which must not exist.
        Raises ValueError past the size budget or :data:`MAX_DEPTH`, OSError when the folder cannot be read."""
        if depth > MAX_DEPTH:
            raise ValueError(f"its folders nest deeper than {MAX_DEPTH}")
        os.makedirs(dest)
        names = sorted(os.listdir(dir_fd))
        skipped = set(self.ignore(path, names))  # nbgrader's globs and size limit, by name
        if skip_timestamp:  # the server's time replaces it
            skipped.add("timestamp.txt")
        for name in names:
            try:
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            self.ctimes_ns.append(st.st_ctime_ns)
            if name in skipped:
                continue
            full = os.path.join(path, name)
            if stat.S_ISDIR(st.st_mode):
                fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
                try:
                    refused = self._refused(os.fstat(fd))
                    if refused:
                        self.log.warning("Submitted folder %s is %s: not collected", full, refused)
                        continue
                    self.copy(fd, full, os.path.join(dest, name), depth=depth + 1)
                    self.ctimes_ns.append(os.fstat(fd).st_ctime_ns)
                finally:
                    os.close(fd)
            elif stat.S_ISREG(st.st_mode):
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
                with os.fdopen(fd, "rb") as f:
                    refused = self._refused(os.fstat(fd), regular=True)
                    if refused:
                        self.log.warning("Submitted file %s is %s: not collected", full, refused)
                        continue
                    with open(os.path.join(dest, name), "wb") as out:
                        self._copy_file(f, out)
                    st = os.fstat(fd)
                    os.chmod(os.path.join(dest, name), stat.S_IMODE(st.st_mode) & 0o777)  # no setuid bit as root
                    self.ctimes_ns.append(st.st_ctime_ns)
            else:
                what = f"a symlink to {os.readlink(name, dir_fd=dir_fd)!r}" if stat.S_ISLNK(st.st_mode) else \
                    "not a regular file"
                self.log.warning("Submitted file %s is %s: not collected", full, what)

    def _refused(self, st: os.stat_result, regular: bool = False) -> str | None:
        """Why an entry (its fstat) is not copied, or None."""
        if regular and not stat.S_ISREG(st.st_mode):
            return "not a regular file"
        if st.st_uid != self.owner:
            return f"owned by {_user(st.st_uid)} (uid {st.st_uid}), not by the submission's owner"
        if regular and st.st_nlink != 1:
            return f"a hard link ({st.st_nlink} names), which may be another's file"
        if regular and st.st_size > self.max_file_size:
            return "too large (see config option CourseDirectory.max_file_size)"
        return None

    def _copy_file(self, src, dest) -> None:
        """Copy ``src`` to ``dest``, counting its bytes against the submission's size budget.
        Raises ValueError when the budget runs out."""
        while chunk := src.read(1 << 20):
            self.budget -= len(chunk)
            if self.budget < 0:
                raise ValueError("it is over CourseDirectory.max_dir_size")
            dest.write(chunk)


def scan(path: str) -> tuple[int, int]:
    """(the latest ``st_ctime_ns``, the bytes of its regular files) of the folder ``path`` and everything under it,
    read through descriptors opened without following symlinks (entries that vanish meanwhile are passed over).
    Raises OSError when ``path`` cannot be opened as a folder, ValueError when folders nest deeper than
    :data:`MAX_DEPTH`."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        return _scan(fd, 0)
    finally:
        os.close(fd)


def _scan(fd: int, depth: int) -> tuple[int, int]:
    if depth > MAX_DEPTH:
        raise ValueError(f"its folders nest deeper than {MAX_DEPTH}")
    latest, size = os.fstat(fd).st_ctime_ns, 0
    for entry in os.scandir(fd):
        try:
            st = entry.stat(follow_symlinks=False)
            latest = max(latest, st.st_ctime_ns)
            if stat.S_ISREG(st.st_mode):
                size += st.st_size
            elif stat.S_ISDIR(st.st_mode):
                sub = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                try:
                    below = _scan(sub, depth + 1)
                finally:
                    os.close(sub)
                latest, size = max(latest, below[0]), size + below[1]
        except (FileNotFoundError, NotADirectoryError):  # gone, or no longer a folder, since it was listed
            continue
    return latest, size


def utc(ns: int) -> datetime.datetime:
    """A time in nanoseconds since the epoch as nbgrader keeps times: naive UTC, to the microsecond (truncated, as
    nbgrader's timestamp.txt format keeps it, so that a time written and read back compares equal)."""
    return datetime.datetime(1970, 1, 1) + datetime.timedelta(microseconds=ns // 1000)


def _shown(when: datetime.datetime) -> str:
    """A naive UTC time as nbgrader's submit writes timestamp.txt (its default Exchange.timestamp_format)."""
    return when.strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def install() -> None:
    """Make ``nbgrader autograde`` use :class:`RegularFilesAutograde` (called from ``nbgrader_config.py``)."""
    import nbgrader.apps.autogradeapp as app
    app.Autograde = RegularFilesAutograde
