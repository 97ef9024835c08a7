"""Content-addressed cache of emitted bytes, outside the repository.

Keys are hashes of everything an output depends on (including the generator's own version), so a
stale entry can never be hit; the cache can be deleted at any time. Location: ``UMMAYA_CACHE``,
else ``$XDG_CACHE_HOME/ummaya``, else ``~/.cache/ummaya``.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

from ummaya.model.containment import write_atomic


def default_cache_dir() -> Path:
    env = os.environ.get("UMMAYA_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "ummaya"


class Cache:
    def __init__(self, folder: Path | None = None):
        self.folder = Path(folder) if folder else default_cache_dir()

    def _path(self, kind: str, key: str) -> Path:
        return self.folder / kind / key[:2] / f"{key}.json"

    def get(self, kind: str, key: str) -> dict[str, bytes] | None:
        try:
            raw = json.loads(self._path(kind, key).read_bytes())
            return {name: base64.b64decode(data) for name, data in raw.items()}
        except (OSError, ValueError):
            return None

    def put(self, kind: str, key: str, files: dict[str, bytes]) -> None:
        payload = json.dumps({n: base64.b64encode(d).decode("ascii") for n, d in files.items()})
        write_atomic(self._path(kind, key), payload.encode("ascii"))


class FileHashes:
    """sha256 of files remembered by (size, mtime_ns), the way git's index avoids re-reading files.

    A no-op build of 1,000 adapters would otherwise read and hash ~9,000 files. An entry is trusted
    only when the file's mtime is clearly older than the moment the entry was recorded, so a file
    rewritten within the same timestamp tick is hashed again (git's "racy" rule).
    """

    RACY_NS = 100_000_000  # Linux mtimes move in kernel ticks (<= 10 ms); 100 ms is a wide margin

    def __init__(self, root: Path, folder: Path | None = None):
        import hashlib

        base = Path(folder) if folder else default_cache_dir()
        self.path = base / "stat" / f"{hashlib.sha256(str(root).encode()).hexdigest()}.json"
        try:
            self.entries: dict[str, list] = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            self.entries = {}
        self.dirty = False

    def hash(self, path: str) -> str:
        import hashlib
        import time

        st = os.stat(path)
        entry = self.entries.get(path)
        if entry and entry[0] == st.st_size and entry[1] == st.st_mtime_ns and st.st_mtime_ns < entry[3] - self.RACY_NS:
            return entry[2]
        with open(path, "rb") as fh:
            digest = hashlib.sha256(fh.read()).hexdigest()
        self.entries[path] = [st.st_size, st.st_mtime_ns, digest, time.time_ns()]
        self.dirty = True
        return digest

    def record(self, path: str, digest: str) -> None:
        """Remember a hash the caller already knows (a file it just wrote)."""
        import time

        st = os.stat(path)
        self.entries[path] = [st.st_size, st.st_mtime_ns, digest, time.time_ns()]
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        if write_atomic(self.path, json.dumps(self.entries).encode("ascii")):
            self.dirty = False
