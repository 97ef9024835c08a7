"""Content-addressed cache of emitted bytes, outside the repository.

Keys are hashes of everything an output depends on (including the generator's own version), so a
stale entry can never be hit; the cache can be deleted at any time. Location: ``UMMAYA_CACHE``,
else ``$XDG_CACHE_HOME/ummaya``, else ``~/.cache/ummaya``.

Stale entries (an edited manifest's old parts, every entry of an older generator) are pruned: a hit
refreshes its entry's mtime (at most once a day), and a build that wrote something removes, at
most once a day, the entries no build has used for ``UMMAYA_CACHE_MAX_AGE_DAYS`` (default 14) —
``prune``. A pruned entry that was still wanted costs one recomputation, never a wrong output.
"""

from __future__ import annotations

import base64
import json
import os
import time
from pathlib import Path

from ummaya.model.containment import write_atomic


def default_cache_dir() -> Path:
    env = os.environ.get("UMMAYA_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "ummaya"


USED_REFRESH_S = 86_400  # a hit refreshes its entry's mtime when it is older than this
PRUNE_EVERY_S = 86_400  # ``maybe_prune`` walks the cache at most this often
DEFAULT_MAX_AGE_DAYS = 14.0
_STAMP = ".pruned"
# Compiled answer templates (model.templates.code_cache): the build's link fills it, the scenario
# gate's workers read it. Same <kind>/<2 hex>/<key>.<ext> layout, so ``prune`` ages them out too.
TEMPLATES_CACHE = "templates"


def mark_used(path: str | os.PathLike[str], mtime: float) -> None:
    """Tell ``prune`` that an entry (last modified at ``mtime``) was just read."""
    if time.time() - mtime > USED_REFRESH_S:
        try:
            os.utime(path)
        except OSError:
            pass


def max_age_s() -> float:
    try:
        days = float(os.environ.get("UMMAYA_CACHE_MAX_AGE_DAYS", DEFAULT_MAX_AGE_DAYS))
    except ValueError:
        days = DEFAULT_MAX_AGE_DAYS
    return max(days, 0.0) * 86_400


def prune(folder: Path, *, older_than_s: float | None = None, now: float | None = None) -> int:
    """Remove the entries of the cache in ``folder`` unused for ``older_than_s`` seconds (default
    ``UMMAYA_CACHE_MAX_AGE_DAYS``): every ``<kind>/<2 hex>/<key>.<ext>`` file, whatever wrote it
    (emitted bytes, adapter states, parsed YAML), and the shard folders left empty. Other files
    (the stat memo, the generator memo, index folders) are left alone. Returns how many entries
    went."""
    cutoff = (time.time() if now is None else now) - (max_age_s() if older_than_s is None else older_than_s)
    removed = 0
    try:
        kinds = list(os.scandir(folder))
    except OSError:
        return 0
    for kind in kinds:
        if not kind.is_dir(follow_symlinks=False):
            continue
        for shard in os.scandir(kind.path):
            if len(shard.name) != 2 or not shard.is_dir(follow_symlinks=False):
                continue
            left = 0
            for entry in os.scandir(shard.path):
                try:
                    old = entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < cutoff
                    if old and entry.name.startswith(shard.name):
                        os.unlink(entry.path)
                        removed += 1
                    else:
                        left += 1
                except OSError:
                    left += 1
            if not left:
                try:
                    os.rmdir(shard.path)
                except OSError:
                    pass
    return removed


def maybe_prune(folder: Path) -> int:
    """``prune`` when the last one in ``folder`` is older than a day (a build calls it)."""
    stamp = Path(folder) / _STAMP
    try:
        if time.time() - stamp.stat().st_mtime < PRUNE_EVERY_S:
            return 0
    except OSError:
        pass
    removed = prune(Path(folder))
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()
    except OSError:
        pass
    return removed


class Cache:
    def __init__(self, folder: Path | None = None):
        self.folder = Path(folder) if folder else default_cache_dir()

    def _path(self, kind: str, key: str) -> Path:
        return self.folder / kind / key[:2] / f"{key}.json"

    def get(self, kind: str, key: str) -> dict[str, bytes] | None:
        path = self._path(kind, key)
        try:
            with open(path, "rb") as fh:
                mtime = os.fstat(fh.fileno()).st_mtime
                raw = json.loads(fh.read())
            out = {name: base64.b64decode(data) for name, data in raw.items()}
        except (OSError, ValueError):
            return None
        mark_used(path, mtime)
        return out

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
        # Entries of files that are gone (a deleted manifest, an output no longer emitted) would
        # otherwise stay in the memo for good.
        self.entries = {p: e for p, e in self.entries.items() if os.path.lexists(p)}
        if write_atomic(self.path, json.dumps(self.entries).encode("ascii")):
            self.dirty = False
