"""The one atomic file write: the bytes go to a temporary name beside the target, are flushed
and fsynced, then renamed over the target, so a reader sees the old file or the new one, never
part of one. If anything fails on the way (a full disk, a kill between the steps is the only
exception), the temporary file is removed and the error goes to the caller: nothing half
written is left behind."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

from evaluator.core.sanitize import dumps_strict


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary path beside `path` for a writer that needs a file name (Parquet, CSV);
    when the block ends without an error it replaces `path`, otherwise it is removed."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise


def write_bytes(path: Path, data: bytes, fsync: bool = True) -> None:
    """Replace `path` with `data` atomically (see the module doc); `fsync=False` for a cache,
    where a lost write after a power cut only costs a recomputation."""
    with replacing(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        if fsync:
            os.fsync(fh.fileno())


def write_json(path: Path, obj: object, indent: int | None = 1, fsync: bool = True) -> None:
    """Replace `path` with `obj` as strict JSON (no bare NaN or Infinity), atomically."""
    write_bytes(path, dumps_strict(obj, indent=indent).encode("utf-8"), fsync)


def flush(path: Path) -> None:
    """Everything written to the file system that holds `path` on disk (syncfs; os.sync where
    that is missing): one call for a batch of files instead of an fsync per file."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(path, os.O_RDONLY)
        try:
            if libc.syncfs(fd) == 0:
                return
        finally:
            os.close(fd)
    except (OSError, AttributeError):
        pass
    os.sync()
