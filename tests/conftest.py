"""Every test gets its own UMMAYA_HOME, so nothing reads or writes ~/.ummaya: the consent ledger's
key file and signed head checkpoints live there (runtime/store/ledger.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _own_ummaya_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    # Always a fresh one, even when CI exports UMMAYA_HOME: a key file or head checkpoint left by
    # one test (or by the other database of a parametrised test) must not decide another's result.
    monkeypatch.setenv("UMMAYA_HOME", str(Path(tmp_path_factory.mktemp("home"))))
    for name in ("UMMAYA_LEDGER_KEY", "UMMAYA_LEDGER_RETIRED_KEYS", "UMMAYA_LEDGER_HEAD_DIR",
                 "UMMAYA_API_KEYS"):
        monkeypatch.delenv(name, raising=False)
