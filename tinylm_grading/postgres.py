"""A throwaway PostgreSQL server for a gradebook that takes concurrent writers: the tests and the benchmark of parallel
grading start one, and an instructor can try parallel grading with one before asking for a real database.

    python -m tinylm_grading.postgres     # starts one, prints its db_url; Ctrl-C stops it and deletes its files

It is PostgreSQL's own server (Debian: ``apt-get install postgresql``), in a new temporary folder: ``initdb`` with
trust authentication, listening on a Unix socket in that folder only (no TCP port), fsync off (the data is thrown
away). A server refuses to run as root: as root, the folder is given to the ``postgres`` user (which Debian's
package creates) and the server runs as it. Its ``db_url`` is SQLAlchemy's: ``postgresql://tinylm@/gradebook?host=
FOLDER`` (SQLAlchemy's driver for it is ``psycopg``, a dependency of the course).
"""
from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

USER = "tinylm"
"""The database's superuser (trust authentication on the socket: no password)."""
DATABASE = "gradebook"


class PostgresMissing(RuntimeError):
    """PostgreSQL's server programs are not installed."""


def bin_dir() -> Path:
    """The folder of ``initdb`` and ``postgres``: on ``PATH``, else Debian's newest ``/usr/lib/postgresql/N/bin``.
    Raises :class:`PostgresMissing`."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent  # a link on PATH (Debian links only some): the programs beside it
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if debian:
        return Path(debian[-1]).parent
    raise PostgresMissing("PostgreSQL is not installed (Debian: apt-get install postgresql)")


@contextlib.contextmanager
def temporary_server() -> Iterator[str]:
    """Start a server (see the module docstring), yield its gradebook's ``db_url``; stop it and delete its folder on
    exit. Raises :class:`PostgresMissing`, or RuntimeError with the server's log if it does not start."""
    bin_ = bin_dir()
    folder = Path(tempfile.mkdtemp(prefix="tinylm-postgres-"))
    as_user: dict = {}
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        os.chown(folder, owner.pw_uid, owner.pw_gid)
        as_user = {"user": owner.pw_uid, "group": owner.pw_gid, "extra_groups": []}
    data, log = folder / "data", folder / "server.log"
    server = None
    try:
        subprocess.run([str(bin_ / "initdb"), "-D", str(data), "-U", USER, "-A", "trust", "-E", "UTF8",
                        "--locale=C", "--no-sync"], check=True, capture_output=True, **as_user)
        with open(log, "wb") as out:
            server = subprocess.Popen([str(bin_ / "postgres"), "-D", str(data), "-k", str(folder),
                                       "-c", "listen_addresses=", "-c", "fsync=off", "-c", "max_connections=200"],
                                      stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, **as_user)
        deadline = time.monotonic() + 60
        while subprocess.run([str(bin_ / "pg_isready"), "-q", "-h", str(folder)]).returncode != 0:
            if server.poll() is not None or time.monotonic() > deadline:
                said = log.read_text(encoding="utf-8", errors="replace")
                raise RuntimeError(f"PostgreSQL did not start:\n{said[-2000:]}")
            time.sleep(0.1)
        subprocess.run([str(bin_ / "createdb"), "-h", str(folder), "-U", USER, DATABASE], check=True,
                       capture_output=True)
        yield f"postgresql://{USER}@/{DATABASE}?host={folder}"
    finally:
        if server is not None:
            server.send_signal(signal.SIGINT)  # PostgreSQL's "fast" shutdown
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    try:
        with temporary_server() as url:
            print(url, flush=True)
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                pass
    except PostgresMissing as e:
        print(f"tinylm_grading.postgres: {e}", file=__import__("sys").stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
