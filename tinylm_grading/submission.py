"""Copy a learner's submission for grading without following the symlinks in it.

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
The exchange's collect step is configured with ``c.ExchangeFactory.collect``.
"""
from __future__ import annotations

import os
import shutil
import stat

from nbgrader.api import Gradebook
from nbgrader.converters import Autograde, BaseConverter
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import ignore_patterns, is_ignored, remove


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
    os.chmod(dest, stat.S_IMODE(st.st_mode))


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


class RegularFilesCollect(ExchangeCollect):
    """nbgrader's exchange ``collect``, copying only regular files from a submission in the inbound folder:
    symlinks and special files are left out with a warning (``shutil.copytree`` would follow them, as
    the instructor). A submission folder that is itself a symlink is not collected (an error names it, and
    collect goes on with the others). RuntimeError, as nbgrader's, when the folder is over ``max_dir_size``."""

    def do_copy(self, src, dest, log=None):
        if os.path.islink(src):
            self.log.error("Submission %s is a symlink to %r: not collected", src, os.readlink(src))
            return
        size, most = self.get_size(src), 1000 * self.coursedir.max_dir_size
        if size > most:
            self.log.error("Directory size is too big")
            raise RuntimeError(f"Directory size is too big. Size is {size}, maximum size is {most}")
        nbgrader_ignore = ignore_patterns(exclude=self.coursedir.ignore, include=self.coursedir.include,
                                          max_file_size=self.coursedir.max_file_size, log=self.log)

        def ignore(directory, names):
            skipped = set(nbgrader_ignore(directory, names))
            for name in set(names) - skipped:
                path = os.path.join(directory, name)
                kind = _kind(path)
                if kind is not None and kind != "a folder":
                    self.log.warning("Submitted file %s is %s: not collected", path, kind)
                    skipped.add(name)
            return skipped

        shutil.copytree(src, dest, ignore=ignore, copy_function=copy_regular_file)
        if self.coursedir.groupshared:  # as nbgrader's do_copy: group members may read and write
            for dirname, _, filenames in os.walk(dest):
                os.chmod(dirname, (os.stat(dirname).st_mode | 0o2770) & 0o2777)
                for filename in filenames:
                    path = os.path.join(dirname, filename)
                    os.chmod(path, (os.stat(path).st_mode | 0o660) & 0o777)


def install() -> None:
    """Make ``nbgrader autograde`` use :class:`RegularFilesAutograde` (called from ``nbgrader_config.py``)."""
    import nbgrader.apps.autogradeapp as app
    app.Autograde = RegularFilesAutograde
