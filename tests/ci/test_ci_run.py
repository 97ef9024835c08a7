"""CI (.ci/run) runs the README's test command, in a random order with a fixed, printed seed."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ci_runs_the_readme_test_command_in_a_seeded_random_order():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci/run").read_text(encoding="utf-8")
    command = re.search(r"Run the tests:\n\n    (.+)\n", readme).group(1)
    assert command in ci.splitlines(), "CI must run exactly the README's test command"
    assert "--randomly-seed=${UMMAYA_TEST_SEED}" in ci and 'echo "test order: pytest-randomly seed ${UMMAYA_TEST_SEED}' in ci
    assert ci.index("PYTEST_ADDOPTS") < ci.index(command)
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert any(r.startswith("pytest-randomly") for r in extras["test"]), "the README's test install brings pytest-randomly"
