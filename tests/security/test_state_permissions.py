"""Red-team: the local state is the owner's only (each failed before its fix).

Session ids are bearer tokens (whoever has one inherits the session's consents and location),
and they are stored as issued. ``~/.ummaya`` was created 0755 and its SQLite file 0644, so any
other local user could read them; the ledger key beside them was already 0600."""

from __future__ import annotations

import stat
from pathlib import Path

from ummaya.paths import state_dir
from ummaya.runtime.store import open_store


def test_a_new_state_folder_is_0700(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "fresh" / "home"
    monkeypatch.setenv("UMMAYA_HOME", str(home))
    assert state_dir() == home
    assert stat.S_IMODE(home.stat().st_mode) == 0o700


def test_a_new_sqlite_database_and_its_wal_are_0600(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store = open_store(f"sqlite:///{path}")
    try:
        for p in [path, *tmp_path.glob("s.sqlite3-*")]:
            assert stat.S_IMODE(p.stat().st_mode) == 0o600, (p, oct(p.stat().st_mode))
    finally:
        store.close()
