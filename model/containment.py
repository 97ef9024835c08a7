"""What the build may read: regular files that resolve (after symlinks) inside ``registry/``.

A manifest arrives in a pull request and CI builds it — as root. Without this, a fixture's
``response: ../../../../etc/shadow`` (or a symlink, or a FIFO, or ``/dev/zero``) would copy any
readable file into ``generated/`` and from there into a release, or hang the build. Every path a
manifest, profile or scenario names, and every file the build hashes, passes ``unreadable`` first.

Kept free of YAML and pydantic: the no-op rebuild path (emit_lock.hash_inputs) uses it too.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path, PurePosixPath

# A fixture body or any other file under registry/ (the largest real body is ~100 KB).
MAX_INPUT_BYTES = 4 * 1024 * 1024


def inside(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> bool:
    """True when ``path`` resolves, symlinks followed, to ``folder`` (already resolved) or below."""
    real = os.path.realpath(path)
    base = os.fspath(folder)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def unreadable(path: str | os.PathLike[str], registry: str | os.PathLike[str], limit: int = MAX_INPUT_BYTES) -> str | None:
    """Why the build must not read ``path`` (``registry`` is the resolved registry folder), or
    None when it may. One ``lstat`` for a plain file; symlinks are resolved and contained."""
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            if not inside(path, registry):
                return f"resolves outside registry/ (symlink to {os.path.realpath(path)})"
            st = os.stat(path)
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        return f"not a regular file ({_kind(st.st_mode)})"
    if st.st_size > limit:
        return f"file too large: {st.st_size:,} bytes (limit {limit:,})"
    return None


def bad_relative_name(name: str) -> str | None:
    """A file name a manifest gives relative to its own folder must stay there: no absolute path,
    no ``..``, no backslash or NUL (which mean something else on another system)."""
    if not name or "\\" in name or "\0" in name:
        return "must be a relative file name (no backslash, no NUL)"
    p = PurePosixPath(name)
    if p.is_absolute() or ".." in p.parts:
        return "must stay inside the adapter's fixtures folder (no absolute path, no '..')"
    return None


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def read_regular(path: Path, limit: int) -> bytes:
    """Read at most ``limit`` bytes of a regular file, refusing anything else without blocking:
    opened non-blocking (a FIFO does not wait for a writer), checked with ``fstat`` on the open
    descriptor (no swap between check and read), and read one byte past the limit (``/proc``
    files report size 0)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise UnsafeFile(f"cannot read: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(f"not a regular file ({_kind(st.st_mode)})")
        if st.st_size > limit:
            raise UnsafeFile(f"file too large: {st.st_size:,} bytes (limit {limit:,})")
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise UnsafeFile(f"file too large: more than {limit:,} bytes")
        return data
    finally:
        os.close(fd)


class UnsafeFile(Exception):
    """A file the build refuses to read; the message says why (located by the caller)."""


def write_atomic(path: Path, data: bytes) -> bool:
    """Write then rename, so a concurrent build never reads half a file. False when it cannot be
    written: a cache that cannot be written only costs time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        return False
