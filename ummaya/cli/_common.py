"""Options and output helpers shared by the commands."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

root_option = click.option(
    "--root",
    type=click.Path(exists=True, file_okay=False, path_type=str),
    default=None,
    help="Project folder (default: the nearest folder upwards holding registry/).",
)


def emit_json(obj: Any) -> None:
    """One JSON object per line, UTF-8, Korean kept readable."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, sort_keys=False) + "\n")
    sys.stdout.flush()


def fail(message: str, code: int = 1) -> None:
    click.echo(message, err=True)
    raise SystemExit(code)


# -- option values that must fail cleanly (exit 2, the option named), never as a traceback -------

MAX_SESSION_CHARS = 128


def _utf8(ptype: click.ParamType, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
    """The option's text, or a clean usage error (exit 2): a shell can pass bytes that are not
    UTF-8 (surrogate escapes), which would otherwise fail later with a traceback."""
    text = str(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        ptype.fail("is not valid UTF-8 (invalid bytes)", param, ctx)
    return text


class SessionName(click.ParamType):
    """A local session name: 1–128 printable characters (Korean welcome), no control characters,
    nothing that is not valid UTF-8. ``'*'`` (every session) only where ``standing`` allows it."""

    name = "session"

    def __init__(self, standing: bool = False):
        self.standing = standing

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = _utf8(self, value, param, ctx)
        if not text.strip():
            self.fail("is empty", param, ctx)
        if len(text) > MAX_SESSION_CHARS:
            self.fail(f"is over {MAX_SESSION_CHARS} characters", param, ctx)
        if any(not ch.isprintable() for ch in text):
            self.fail("contains control or non-printable characters", param, ctx)
        if text == "*" and not self.standing:
            self.fail("'*' means every session; name one session", param, ctx)
        return text


SUPPORTED_DB = ("sqlite:", "postgresql://", "postgres://")


class DatabaseURL(click.ParamType):
    """``sqlite:///path``, ``postgresql://…`` or a plain file path; anything else is refused before
    anything is opened."""

    name = "url"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = _utf8(self, value, param, ctx)
        if not text.strip() or any(ord(ch) < 32 for ch in text):
            self.fail("is empty or contains control characters", param, ctx)
        if "://" in text and not text.startswith(SUPPORTED_DB):
            scheme = text.split("://", 1)[0]
            self.fail(f"unsupported database URL scheme {scheme!r} (use sqlite:///path or "
                      "postgresql://…)", param, ctx)
        return text


def db_option_for(help_text: str | None = None) -> Any:
    return click.option(
        "--db", default=None, metavar="URL", type=DatabaseURL(),
        help=help_text or "Store URL (sqlite:///path or postgresql://…); default: "
                          "UMMAYA_DATABASE_URL, else state_dir()/ummaya.sqlite3.",
    )


def open_db(db: str | None, **kw: Any) -> Any:
    """The store, or a clean exit 2 naming why it cannot be opened (unreachable server, a path
    that is a folder or not writable, a bad URL in UMMAYA_DATABASE_URL)."""
    from ummaya.runtime.store import open_store

    try:
        return open_store(db, **kw)
    except Exception as exc:  # noqa: BLE001 - every cause ends the same clean way
        where = f"--db {db}" if db else "the database (UMMAYA_DATABASE_URL or UMMAYA_HOME)"
        fail(f"error [store_unavailable]: cannot open {where}: {exc}", 2)


class RecordId(click.ParamType):
    """A trace or consent id given on the command line: printable, valid UTF-8, at most 128."""

    name = "id"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = _utf8(self, value, param, ctx)
        if not text or len(text) > 128 or any(not ch.isprintable() or ch.isspace() for ch in text):
            self.fail("is not an id (1–128 printable characters, no spaces)", param, ctx)
        return text
