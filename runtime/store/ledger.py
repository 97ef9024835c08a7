"""The consent ledger's keys and its signed head: what makes the hash chain tamper-evident to
someone who can write to the database.

A plain hash chain can be rewritten by anyone with database access (edit a row, re-hash the rest)
and cannot show that its newest rows were cut off. Two things fix that, both kept outside the
database:

* **A key.** Every record's hash is an HMAC-SHA256 over its canonical JSON (``prev_hash`` and the
  signing key's id included). The key is ``UMMAYA_LEDGER_KEY`` (at least 32 characters), else the
  file ``$UMMAYA_HOME/ledger.key``, created 0600 with 32 random bytes on first use. Keys retired by
  a rotation stay available to *verify* older records: ``UMMAYA_LEDGER_RETIRED_KEYS``
  (comma-separated, oldest first) and the lines of ``$UMMAYA_HOME/ledger.retired``.
* **A signed head checkpoint.** After each append, ``<head dir>/<ledger_id>.json`` holds the last
  sequence number and hash, HMAC-signed with the current key (``UMMAYA_LEDGER_HEAD_DIR``, default
  ``$UMMAYA_HOME/ledger-heads``). Deleting the newest rows (a revocation) no longer passes: the
  chain must end exactly where the checkpoint says.

See docs/ledger.md for the threat model, key rotation and recovery.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KEY_ENV = "UMMAYA_LEDGER_KEY"
RETIRED_ENV = "UMMAYA_LEDGER_RETIRED_KEYS"
HEAD_DIR_ENV = "UMMAYA_LEDGER_HEAD_DIR"
KEY_FILE = "ledger.key"
RETIRED_FILE = "ledger.retired"
HEAD_DIRNAME = "ledger-heads"
MIN_KEY_CHARS = 32
LEDGER_ID = re.compile(r"^[0-9a-f]{32}$")


class LedgerKeyError(Exception):
    """The ledger key is missing, too short or readable by others."""


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")


def key_id_of(key: bytes) -> str:
    """A public name for a key (it reveals nothing about the key)."""
    return hmac.new(key, b"ummaya ledger key id", hashlib.sha256).hexdigest()[:16]


def mac(key: bytes, payload: Any) -> str:
    return hmac.new(key, _canonical(payload), hashlib.sha256).hexdigest()


def _state_dir() -> Path:
    from ummaya.paths import state_dir

    return state_dir()


def _check_key(text: str, where: str) -> bytes:
    text = text.strip()
    if len(text) < MIN_KEY_CHARS:
        raise LedgerKeyError(f"{where}: the ledger key must have at least {MIN_KEY_CHARS} characters")
    return text.encode("utf-8")


def _private_file(path: Path) -> str:
    """Read a key file, refusing one that others can read (like ssh does)."""
    st = path.stat()
    if st.st_mode & 0o077:
        raise LedgerKeyError(f"{path}: permissions {oct(st.st_mode & 0o777)} are too open; "
                             "the ledger key file must be 0600")
    return path.read_text(encoding="utf-8")


def _create_key_file(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return  # another process made it first: use theirs
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(secrets.token_hex(32) + "\n")
        f.flush()
        os.fsync(f.fileno())


@dataclass(frozen=True)
class Keyring:
    """The key that signs new records and the head, plus retired keys that only verify."""

    current: bytes
    retired: tuple[bytes, ...] = ()
    source: str = ""

    @property
    def current_id(self) -> str:
        return key_id_of(self.current)

    def order(self) -> list[str]:
        """Key ids oldest first: along the chain a record never uses an older key than the one
        before it (a retired key cannot sign after its successor has)."""
        ids: list[str] = []
        for k in (*self.retired, self.current):
            kid = key_id_of(k)
            if kid in ids:
                ids.remove(kid)
            ids.append(kid)
        return ids

    def by_id(self, kid: str | None) -> bytes | None:
        for k in (self.current, *self.retired):
            if key_id_of(k) == kid:
                return k
        return None

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, home: Path | None = None) -> "Keyring":
        env = dict(os.environ if env is None else env)
        retired: list[bytes] = []
        value = env.get(RETIRED_ENV, "")
        for i, part in enumerate(p for p in value.split(",") if p.strip()):
            retired.append(_check_key(part, f"{RETIRED_ENV}[{i}]"))
        if env.get(KEY_ENV, "").strip():
            current = _check_key(env[KEY_ENV], KEY_ENV)
            source = KEY_ENV
        else:
            home = home or _state_dir()
            path = home / KEY_FILE
            if not path.exists():
                _create_key_file(path)
            current = _check_key(_private_file(path), str(path))
            source = str(path)
            rpath = home / RETIRED_FILE
            if rpath.exists():
                lines = [ln for ln in _private_file(rpath).splitlines() if ln.strip()]
                retired = [_check_key(ln, f"{rpath}:{n + 1}") for n, ln in enumerate(lines)] + retired
        return cls(current, tuple(retired), source)


@dataclass(frozen=True)
class Head:
    ledger_id: str
    seq: int
    hash: str
    key_id: str
    mac: str

    def payload(self) -> dict[str, Any]:
        return {"ledger_id": self.ledger_id, "seq": self.seq, "hash": self.hash, "key_id": self.key_id}


class HeadFile:
    """The signed head checkpoint of each ledger, one small JSON file per ledger id."""

    def __init__(self, folder: Path | None = None, env: dict[str, str] | None = None):
        env = dict(os.environ if env is None else env)
        if folder is None:
            folder = Path(env[HEAD_DIR_ENV]) if env.get(HEAD_DIR_ENV) else _state_dir() / HEAD_DIRNAME
        self.folder = folder

    def path(self, ledger_id: str) -> Path:
        if not LEDGER_ID.match(ledger_id or ""):  # the id comes from the database: never a path
            raise ValueError(f"malformed ledger id {ledger_id!r}")
        return self.folder / f"{ledger_id}.json"

    def read(self, ledger_id: str) -> Head | dict[str, Any] | None:
        """The checkpoint, None when there is none, or {"error": why} when it is unreadable."""
        path = self.path(ledger_id)
        try:
            # Whoever can replace the checkpoint can roll it back together with the database's
            # tail: a folder or file others may write is no checkpoint (like ssh's StrictModes).
            for what, where in (("folder", self.folder), ("file", path)):
                mode = where.stat().st_mode
                if stat.S_IMODE(mode) & 0o022:
                    return {"error": f"{where}: the head checkpoint {what} is writable by others "
                                     f"({oct(mode & 0o777)}); it must be 0700/0600"}
            data = json.loads(path.read_text(encoding="utf-8"))
            return Head(str(data["ledger_id"]), int(data["seq"]), str(data["hash"]),
                        str(data["key_id"]), str(data["mac"]))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return {"error": f"{path}: unreadable head checkpoint ({exc})"}

    def write(self, keys: Keyring, ledger_id: str, seq: int, hash_: str) -> Head:
        head = Head(ledger_id, int(seq), hash_, keys.current_id, "")
        head = Head(**{**head.__dict__, "mac": mac(keys.current, head.payload())})
        path = self.path(ledger_id)
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=f".{ledger_id}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({**head.payload(), "mac": head.mac}, f, sort_keys=True)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return head


def check_head(head: Head, keys: Keyring, ledger_id: str) -> str | None:
    """Why the checkpoint cannot be trusted, or None. Only the current key may sign the head:
    after a rotation, ``ummaya consent anchor`` (or the next append) re-signs it."""
    if head.ledger_id != ledger_id:
        return "the head checkpoint belongs to another ledger"
    if head.key_id != keys.current_id:
        return ("the head checkpoint is not signed with the current ledger key "
                "(after a key rotation run `ummaya consent anchor`)")
    if not hmac.compare_digest(head.mac, mac(keys.current, head.payload())):
        return "the head checkpoint's signature is wrong (it was edited)"
    return None


def rotate_key_file(store: Any) -> Any:
    """``ummaya consent rotate-key``: only for the key file (an environment key is rotated by
    hand). The ledger must verify first; the old key is appended to ``ledger.retired`` (0600) so
    older records still verify, a new key replaces ``ledger.key`` atomically, and the head is
    re-signed with it. Processes that already loaded the old key must restart."""
    if os.environ.get(KEY_ENV, "").strip():
        raise LedgerKeyError(f"{KEY_ENV} is set: rotate it by hand (docs/ledger.md)")
    report = store.verify()
    if not report.ok:
        return report
    home = _state_dir()
    path, rpath = home / KEY_FILE, home / RETIRED_FILE
    old = _check_key(_private_file(path), str(path)).decode("utf-8")
    fd = os.open(rpath, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        f.write(old + "\n")
        f.flush()
        os.fsync(f.fileno())
    fd, tmp = tempfile.mkstemp(dir=home, prefix=".ledger.key.", suffix=".tmp")  # mode 0600
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(secrets.token_hex(32) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    store._keys = None  # reload: the new key signs from now on
    return store.anchor()


__all__ = ["Keyring", "Head", "HeadFile", "LedgerKeyError", "check_head", "key_id_of", "mac",
           "rotate_key_file", "KEY_ENV", "RETIRED_ENV", "HEAD_DIR_ENV", "KEY_FILE", "RETIRED_FILE"]
