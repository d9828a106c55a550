"""The capstone's repository as the checks read it: its text files, by path.

``Repository("tiny-transformer")`` is what a notebook hands to the capstone's checks. Called, it returns
``{path: text}`` for the repository's text files (paths relative to its root, with ``/``); generated files
(checkpoints, caches) are left out. It reads and judges nothing else. Where the checks run in this process, making one
also starts the process the capstone's checks fork their commands from (:func:`tinylm_checks.capstone.prepare`), in
the background.

Its files are UTF-8, read and written as such whatever the system's encoding (a Chinese Windows' is GBK, code page
936, in which a UTF-8 file with Chinese in it does not read back); a byte-order mark an editor put first is dropped
when it reads.
"""
from __future__ import annotations

import sys
from pathlib import Path

from .._text import say

__all__ = ["Repository"]

SKIPPED_DIRS = {"__pycache__", ".pytest_cache", ".ipynb_checkpoints", ".git"}
TEXT_SUFFIXES = {".py", ".yaml", ".yml", ".md", ".txt", ".toml", ".cfg", ".ini"}
TEXT_NAMES = {".gitignore"}  # text files a suffix does not tell (Path(".gitignore").suffix is "")
MAX_FILES, MAX_BYTES = 64, 200_000


class Repository:
    """A folder of text files: ``repo()`` is ``{relative path: text}``.

    Raises (when called):
        FileNotFoundError: if the folder does not exist.
        ValueError: if it holds more than 64 text files, one above 200 kB, or one that is not UTF-8.
    """

    def __init__(self, root: str | Path):
        self.root = Path(root)
        checks = sys.modules.get("tinylm_checks.capstone")  # None where the checks run elsewhere (the check service)
        if checks is not None:
            checks.prepare()  # the capstone's checks will run commands: their process starts now, in the background

    def __repr__(self) -> str:
        return f"Repository({str(self.root)!r})"

    def __call__(self) -> dict[str, str]:
        if not self.root.is_dir():
            raise FileNotFoundError(say("lab.repository.missing", root=repr(str(self.root))))
        files = {}
        for path in sorted(self.root.rglob("*")):
            rel = path.relative_to(self.root)
            if any(part in SKIPPED_DIRS for part in rel.parts) or not path.is_file() \
                    or (path.suffix not in TEXT_SUFFIXES and path.name not in TEXT_NAMES):
                continue
            if len(files) == MAX_FILES:
                raise ValueError(say("lab.repository.too_many", root=self.root, limit=MAX_FILES))
            if path.stat().st_size > MAX_BYTES:
                raise ValueError(say("lab.repository.too_large", name=rel.as_posix(), limit=MAX_BYTES))
            try:
                files[rel.as_posix()] = path.read_text(encoding="utf-8-sig")
            except UnicodeDecodeError as e:
                raise ValueError(say("lab.repository.not_utf8", name=rel.as_posix(), position=e.start + 1)) from None
        return files

    def write(self, files: dict[str, str]) -> None:
        """Write ``files`` (``{relative path: text}``) under the root, folders included, as UTF-8."""
        for name, text in files.items():
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
