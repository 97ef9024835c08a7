"""Find the project a command works on, the way git and cargo find their repository.

The project is the nearest folder upwards that holds ``registry/``, or ``--root DIR``. The runtime
loads ``generated/`` from that root when there is one, else from the installed package.
"""

from __future__ import annotations

import os
from pathlib import Path

import ummaya


class ProjectNotFound(Exception):
    pass


def find_root(start: Path | None = None) -> Path | None:
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "registry").is_dir():
            return folder
    return None


def require_root(root: str | Path | None) -> Path:
    if root is not None:
        path = Path(root).resolve()
        if not (path / "registry").is_dir():
            raise ProjectNotFound(f"{path}: no registry/ folder here")
        return path
    found = find_root()
    if found is None:
        raise ProjectNotFound(
            f"no registry/ folder in {Path.cwd()} or any parent; pass --root DIR"
        )
    return found


def package_generated_dir() -> Path:
    """generated/ as installed with the package (an editable install points at the checkout)."""
    import ummaya.generated as gen

    return Path(gen.__file__).parent


def generated_dir(root: str | Path | None = None) -> Path:
    """The generated/ folder the runtime should load.

    ``UMMAYA_GENERATED`` overrides (tests, benchmarks over synthetic registries); then an explicit
    root; then the project around the working directory; then the installed package.
    """
    env = os.environ.get("UMMAYA_GENERATED")
    if env:
        return Path(env).resolve()
    if root is not None:
        return Path(root).resolve() / "generated"
    found = find_root()
    if found is not None and (found / "generated" / "catalog.json").exists():
        return found / "generated"
    return package_generated_dir()


def state_dir() -> Path:
    """Where sessions, consents and traces live by default (SQLite)."""
    env = os.environ.get("UMMAYA_HOME")
    base = Path(env) if env else Path.home() / ".ummaya"
    # Sessions (their ids are bearer tokens), consents and traces live here: a new folder is the
    # owner's only (0700), like the ledger key beside it. An existing folder is left as it is.
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    return base


__all__ = ["find_root", "require_root", "generated_dir", "state_dir", "ProjectNotFound", "ummaya"]
