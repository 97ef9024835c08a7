"""The layering contracts of ``pyproject.toml`` (``[tool.importlinter]``), checked with import-linter.

The folders are mapped into one ``ummaya.*`` namespace by setup.py (``codegen/`` → ``ummaya.codegen``
…), which import-linter cannot see through an editable install (it walks the ``ummaya/`` folder
alone). So the sources are staged as the installed package is laid out — ``ummaya/`` with
``model/``, ``wire/``, ``codegen/``, ``runtime/``, ``generated/``, ``ci/`` inside — and the contracts are
checked there: ``python -m ummaya.ci.layering`` (exit 1 on a broken contract).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Folder of the checkout -> sub-package of ummaya (setup.py's ROOTS).
FOLDERS = {"model": "model", "wire": "wire", "codegen": "codegen", "runtime": "runtime", "generated": "generated", "ci": "ci"}


def stage(root: Path, into: Path) -> Path:
    """Copy the Python sources under ``into/ummaya/`` as setup.py installs them; returns ``into``."""
    only_py = shutil.ignore_patterns("*.pyc", "__pycache__", "*.json", "*.lock", "static", "*.md")
    shutil.copytree(root / "ummaya", into / "ummaya", ignore=only_py)
    for folder, sub in FOLDERS.items():
        shutil.copytree(root / folder, into / "ummaya" / sub, ignore=only_py)
    return into


def lint_staged(staged: Path, config: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with ``config`` over a tree ``stage`` made."""
    env = {**os.environ, "PYTHONPATH": str(staged)}
    cmd = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command as c; sys.exit(c())",
           str(config), "--no-cache"]
    return subprocess.run(cmd, cwd=staged, env=env, capture_output=True, text=True, check=False)


def lint(root: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """The checkout's contracts (its ``pyproject.toml``) over its staged sources."""
    with tempfile.TemporaryDirectory() as tmp:
        return lint_staged(stage(root, Path(tmp)), root / "pyproject.toml")


def main() -> int:
    done = lint()
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
