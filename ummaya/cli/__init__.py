"""The ``ummaya`` command: a small click group; each command lives in its own module.

Modules are imported lazily so ``ummaya search`` does not pay for the server or the model client.
"""

from __future__ import annotations

import importlib
import os
import sys
import types

import click


class _NoHttpxCli(types.ModuleType):
    """Stands in for ``httpx._main`` until httpx is imported. httpx's ``__init__`` imports its
    command-line client (rich, pygments: ~90 ms of a cold ``ummaya ask``) only to export
    ``httpx.main``, and falls back to a stub when ``from ._main import main`` fails. Asked for
    ``main``, this placeholder leaves ``sys.modules`` and fails, so httpx takes its fallback and a
    later ``import httpx._main`` finds the real module."""

    def __getattr__(self, name: str):
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        raise AttributeError(name)


def _no_pydantic_plugin_scan() -> None:
    """pydantic looks for plugins by reading the entry points of every installed distribution
    when it builds its first model (~50-90 ms of a cold ``ummaya ask``, more in a larger venv).
    The CLI has none to load; ``PYDANTIC_DISABLE_PLUGINS`` is pydantic's own switch, and a value
    the environment already sets (e.g. an empty one, to keep plugins) is left as it is."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


def _httpx_without_its_own_cli() -> None:
    if "httpx" not in sys.modules and "httpx._main" not in sys.modules:
        sys.modules["httpx._main"] = _NoHttpxCli("httpx._main")


# command name -> "module:attribute" (relative to ummaya.cli)
COMMANDS: dict[str, str] = {
    "build": "build:build",
    "check": "check:check",
    "new": "scaffold:new",
    "adapters": "adapters:adapters",
    "search": "search:search",
    "eval": "evaluate:eval_group",
    "ask": "ask:ask",
    "chat": "chat:chat",
    "consent": "consent:consent",
    "trace": "trace:trace",
    "traces": "trace:traces",
    "serve": "serve:serve",
    "mcp": "mcp:mcp",
    "release": "release:release",
    "record": "record:record",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        _httpx_without_its_own_cli()  # before the command imports httpx
        _no_pydantic_plugin_scan()  # before it imports pydantic
        try:
            module = importlib.import_module(f"ummaya.cli.{module_name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"ummaya.cli.{module_name}":
                return None  # command not built yet
            raise
        return getattr(module, attr)


@click.group(cls=LazyGroup)
@click.version_option(package_name="ummaya")
def main() -> None:
    """UMMAYA: ask for Korean public-service outcomes, grounded in real public data."""
    from ummaya.runtime.log_filter import install

    install()  # no log line of any command carries a credential or personal data
