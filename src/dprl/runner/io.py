"""Atomic, self-verifying result files.

A job's result is self-describing: a first line ``#dprl-spec {json}`` (the job's spec and
labels), the CSV, and one footer line ``#dprl-end rows=N sha256=HEX`` that hashes
everything before it. Files are written to a temporary name in the same
directory, fsynced and renamed, so a reader sees either nothing or the whole file; the
footer lets aggregation detect a file truncated or corrupted after the fact and name it.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import tempfile
from pathlib import Path

import pandas as pd

FOOTER = "#dprl-end"
HEADER = "#dprl-spec "


class CorruptResultError(RuntimeError):
    """A result file is truncated, corrupt or not a dprl result."""

    def __init__(self, path: str | Path, why: str) -> None:
        self.path = str(path)
        super().__init__(f"corrupt result file {self.path}: {why}")


# A file system that cannot take the write: full, over quota, read-only, file too large.
STORAGE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG}


def storage_error(err: BaseException) -> str | None:
    """A one-line message if ``err`` (or an exception it was raised from) is an
    ``OSError`` of a file system that cannot take a write, else ``None``."""
    seen = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if isinstance(err, OSError) and err.errno in STORAGE_ERRNOS:
            where = f" writing {err.filename}" if err.filename else ""
            return (f"{err.strerror or os.strerror(err.errno)}{where} (errno {errno.errorcode[err.errno]}); "
                    "nothing was written there: free space (or remount read-write) and rerun")
        err = err.__cause__ or err.__context__
    return None


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file in the same directory,
    fsynced, renamed over ``path``. On any error (a full disk) the temporary file is
    removed and ``path`` is untouched (an older version of it stays valid); an
    ``OSError`` names ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)  # mkstemp makes 0600; results are shared on a cluster
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        if err.filename is None:  # write/fsync errors name no file: say which
            raise OSError(err.errno, err.strerror, str(path)) from err
        raise
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def frame_to_csv(df: pd.DataFrame) -> str:
    """Deterministic CSV text: full float precision, ``\\n`` line endings."""
    return df.to_csv(index=False, float_format="%.17g", lineterminator="\n")


def write_result(path: str | Path, df: pd.DataFrame, meta: dict) -> None:
    """Write ``df`` with ``meta`` (JSON-serialisable: spec and labels) atomically."""
    header = HEADER + json.dumps(meta, sort_keys=True, separators=(",", ":"), default=float) + "\n"
    body = header.encode() + frame_to_csv(df).encode()
    footer = f"{FOOTER} rows={len(df)} sha256={hashlib.sha256(body).hexdigest()}\n".encode()
    atomic_write_bytes(path, body + footer)


def read_result(path: str | Path) -> tuple[pd.DataFrame, dict]:
    """Read a result file, verifying its footer; return ``(table, meta)``.

    Raises :class:`CorruptResultError` (naming the file) if it is missing, truncated,
    altered, or not a dprl result."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise CorruptResultError(path, "missing") from None
    cut = raw.rfind(FOOTER.encode())
    if cut < 0 or not raw.endswith(b"\n"):
        raise CorruptResultError(path, "no end-of-file footer (truncated?)")
    body, footer = raw[:cut], raw[cut:].decode(errors="replace").split()
    try:
        fields = dict(item.split("=", 1) for item in footer[1:])
        rows, digest = int(fields["rows"]), fields["sha256"]
    except (ValueError, KeyError):
        raise CorruptResultError(path, "unreadable footer") from None
    if hashlib.sha256(body).hexdigest() != digest:
        raise CorruptResultError(path, "checksum mismatch")
    first, _, csv = body.partition(b"\n")
    if not first.startswith(HEADER.encode()):
        raise CorruptResultError(path, "no spec header")
    meta = json.loads(first[len(HEADER):])
    df = pd.read_csv(io.BytesIO(csv)) if csv.strip() else pd.DataFrame()
    if len(df) != rows:
        raise CorruptResultError(path, f"{len(df)} rows, footer says {rows}")
    return df, meta
