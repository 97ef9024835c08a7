"""Content-addressed cache of emitted bytes, outside the repository.

Keys are hashes of everything an output depends on (including the generator's own version), so a
stale entry can never be hit; the cache can be deleted at any time. Location: ``UMMAYA_CACHE``,
else ``$XDG_CACHE_HOME/ummaya``, else ``~/.cache/ummaya``.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from pathlib import Path


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
        path = self._path(kind, key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            payload = json.dumps({n: base64.b64encode(d).decode("ascii") for n, d in files.items()})
            # Write then rename: a concurrent build never reads half an entry.
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w") as fh:
                fh.write(payload)
            os.replace(tmp, path)
        except OSError:
            pass  # a cache that cannot be written only costs time
