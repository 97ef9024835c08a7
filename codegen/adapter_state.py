"""What the build derived from each adapter alone, kept per manifest state between builds.

A build at 1,000 adapters spent most of an incremental run re-deriving, for 999 unchanged
adapters, what the previous build had already derived: parsing and validating every manifest,
resolving its profile, re-running its link checks, its service words, its part of the
hidden-service check, its catalog part and index key. Each of those depends on the adapter's own
files plus registry data every adapter shares, so it is kept here under one key per adapter:

    sha256(format | generator | link's shared key | manifest path | manifest sha256
           | every input file under the adapter's fixtures folder | that folder's real path)

where the generator hash covers codegen/ and model/ (and the extension registries) and link's
shared key covers the checker (validators, dispatcher), the allowed hosts and every shared
registry file (registry/_*/: profiles, slot types, vocabularies, channels, intents). A hit gives
a :class:`~ummaya.codegen.loader.LazyManifest`: the steps read its ``state``; anything the state
lacks loads the manifest after all, exactly as a fresh build would, so a missing field costs time,
never bytes. Only manifests that loaded without a problem of their own are kept, so every load
error still comes from a fresh load. The values are marshal-able plain data (no code on load).
"""

from __future__ import annotations

import hashlib
import marshal
import os
from pathlib import Path

from ummaya.model.containment import write_atomic

FORMAT = "adapter-state-1"
FIXTURES_DIR = "fixtures"  # codegen.loader.FIXTURES_DIR


class AdapterStates:
    def __init__(self, folder: Path, head: str, root: Path, inputs: dict[str, str]):
        self.folder = Path(folder)
        self.head = hashlib.sha256(f"{FORMAT}|{head}".encode()).hexdigest()
        self.root = Path(root)
        self.inputs = inputs
        # inputs under each adapter's fixtures folder, by that folder ("registry/x/fixtures/<id>/")
        self._fixtures: dict[str, list[str]] = {}
        for rel in inputs:
            at = rel.find(f"/{FIXTURES_DIR}/")
            if at < 0:
                continue
            rest = rel[at + len(FIXTURES_DIR) + 2:]
            slash = rest.find("/")
            if slash > 0:
                self._fixtures.setdefault(rel[: at + len(FIXTURES_DIR) + 2 + slash + 1], []).append(rel)
        self.keys: dict[str, str] = {}  # rel -> key, for what this build computed
        self.saved: dict[str, int] = {}  # rel -> number of fields the stored state had

    def key(self, rel: str) -> str | None:
        own = self.inputs.get(rel)
        if own is None or own == "unreadable" or not rel.endswith(".yaml"):
            return None
        folder, _, name = rel.rpartition("/")
        fixtures = f"{folder}/{FIXTURES_DIR}/{name[:-5]}/"
        h = hashlib.sha256(f"{self.head}|{rel}|{own}\n".encode())
        for f in self._fixtures.get(fixtures, ()):
            h.update(f"{f}\0{self.inputs[f]}\n".encode())
        # A symlink on the way to the folder (inside registry/, which itself is checked) changes what
        # the loader's containment check says; the input walk does not enter one.
        base = os.path.join(self.root, folder)
        h.update(f"{os.path.islink(base)}{os.path.islink(base + '/' + FIXTURES_DIR)}{os.path.islink(os.path.join(self.root, fixtures[:-1]))}".encode())
        key = h.hexdigest()
        self.keys[rel] = key
        return key

    def _path(self, key: str) -> str:
        return os.path.join(self.folder, key[:2], f"{key}.marshal")

    def get(self, rel: str) -> dict | None:
        key = self.key(rel)
        if key is None:
            return None
        path = self._path(key)
        try:
            with open(path, "rb") as fh:
                mtime = os.fstat(fh.fileno()).st_mtime
                state = marshal.loads(fh.read())
        except (OSError, ValueError, EOFError, TypeError):
            return None
        from .emit_cache import mark_used

        mark_used(path, mtime)
        if not isinstance(state, dict) or "id" not in state:
            return None
        self.saved[rel] = len(state)
        return state

    def put(self, rel: str, state: dict) -> None:
        """Store ``state`` when it holds something the stored one did not (same key: same values)."""
        key = self.keys.get(rel)
        if key is None or self.saved.get(rel) == len(state):
            return
        try:
            blob = marshal.dumps(state)
        except ValueError:  # a value marshal cannot hold: not kept (the next build derives it again)
            return
        write_atomic(Path(self._path(key)), blob)
        self.saved[rel] = len(state)
