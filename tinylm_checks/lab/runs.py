"""Records of a learner's runs, kept between notebooks: stage 09's training and overfit runs, stage 11's
ablations and the first bug met are read back by stage 12's report.

A record is one JSON file, ``<name>.json``, in the runs folder: ``$TINYLM_RUNS`` when set, else
``~/.cache/tinylm/runs`` (``~/.cache/tinylm/runs-quick`` under ``TINYLM_QUICK=1``, whose shortened runs must never
stand in for a learner's real ones). Values are plain data (numbers, strings, lists, dicts; tensors become lists).
Writing never stops a notebook: a folder that cannot be written gives a warning and the record is kept
in memory for this session only.
"""
from __future__ import annotations

import json
import os
import time
import warnings
from pathlib import Path

__all__ = ["record_run", "load_runs", "runs_dir", "peak_memory_mb"]

_SESSION: dict[str, dict] = {}  # records this Python session made, also when they could not be written


def runs_dir() -> Path:
    """The folder records go to: ``$TINYLM_RUNS`` if set, else ``~/.cache/tinylm/runs``, or ``runs-quick`` beside it
    when ``TINYLM_QUICK=1`` (the few-step runs of a quick check: a report must not read them as the real ones)."""
    env = os.environ.get("TINYLM_RUNS")
    if env:
        return Path(env)
    quick = os.environ.get("TINYLM_QUICK") == "1"
    return Path.home() / ".cache" / "tinylm" / ("runs-quick" if quick else "runs")


def peak_memory_mb() -> float:
    """This process's peak resident memory so far, in MB: ``ru_maxrss`` of :mod:`resource` (KB on Linux, bytes on
    macOS); on Windows, which has no :mod:`resource`, its peak working set from psutil (which IPython, the notebooks'
    kernel, installs); NaN where neither is there."""
    try:
        import resource
    except ImportError:
        try:
            import psutil
        except ImportError:
            return float("nan")
        memory = psutil.Process().memory_info()
        return getattr(memory, "peak_wset", memory.rss) / 2 ** 20
    import sys
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (2 ** 20 if sys.platform == "darwin" else 2 ** 10)


def _plain(value):
    if hasattr(value, "tolist"):  # tensors, numpy arrays and scalars
        return value.tolist()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def record_run(name: str, /, **data) -> dict:
    """Save ``data`` as the record ``name`` (replacing an earlier one), with the time it was made.

    Args:
        name: the record's name, e.g. ``"09_train"``: letters, digits, ``_`` and ``-`` only.
        **data: plain values; tensors and arrays are saved as lists.

    Returns:
        The record as saved (a dict with ``"record"`` (its name), ``"time"`` and ``data``'s keys).

    Raises:
        ValueError: if ``name`` is empty or has other characters.
    """
    if not name or not all(c.isalnum() or c in "_-" for c in name):
        raise ValueError(f"a record's name uses letters, digits, _ and - only, got {name!r}")
    record = {"record": name, "time": time.strftime("%Y-%m-%d %H:%M:%S"), **_plain(data)}
    _SESSION[name] = record
    try:
        folder = runs_dir()
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    except OSError as e:
        warnings.warn(f"could not save the run record {name!r} ({e}); it is kept for this session only",
                      stacklevel=2)
    return record


def load_runs() -> dict[str, dict]:
    """Every record in the runs folder, by name, plus those this session could not write; {} if none.
    Files that are not valid JSON records are skipped."""
    runs = {}
    folder = runs_dir()
    if folder.is_dir():
        for path in sorted(folder.glob("*.json")):
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(record, dict):
                runs[path.stem] = record
    return runs | _SESSION
