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


@pytest.fixture(autouse=True)
def _understanding_of_the_checkout():
    # Loading a catalog makes its slot table and vocabularies the ones in use (a process-wide
    # choice). A small registry built in tmp_path — often by a module-scoped fixture, set up before
    # any function-scoped one — must not leave its understanding, usually without the 법정동 table,
    # in use for the next test: after every test the checkout's own build is the one in use again.
    from ummaya.runtime.understand import table

    yield
    table._active = None


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    # pytest-randomly prints its seed in the report header, which the project's own `-q` hides;
    # the summary line is printed under every verbosity, so a failing order can always be replayed.
    seed = getattr(config.option, "randomly_seed", None)
    if seed is not None and config.pluginmanager.hasplugin("randomly"):
        terminalreporter.write_line(f"test order: pytest-randomly seed {seed} "
                                    f"(replay: .venv/bin/pytest -p randomly --randomly-seed={seed})")
