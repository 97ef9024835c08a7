"""Options and output helpers shared by the commands."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

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


def fail(message: str, code: int = 1) -> NoReturn:
    from ummaya.wire.credentials import strip_credentials

    click.echo(strip_credentials(message), err=True)  # a database URL's password, a key
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


# -- the model planner's options, the same on ask, chat and eval turns ---------------------------

PROFILES = ("openai", "vllm", "llamacpp", "ollama", "friendli", "generic", "auto")


def model_options(f: Any) -> Any:
    """``--base-url --model --profile --fallback --timeout --context-tokens --deadline`` (the key
    is read from UMMAYA_LLM_API_KEY / FRIENDLI_TOKEN only, never from the command line)."""
    opts = [
        click.option("--base-url", default=None, help="The model server's /v1 URL (default: UMMAYA_LLM_BASE_URL)."),
        click.option("--model", default=None, help="Model name as the server names it (default: UMMAYA_LLM_MODEL, else K-EXAONE)."),
        click.option("--profile", type=click.Choice(PROFILES), default=None,
                     help="What the server does and does not do (default: UMMAYA_LLM_PROFILE, else by URL; auto: ask its /models once)."),
        click.option("--fallback", type=click.Choice(["offline"]), default=None,
                     help="When the model server fails, go on with the embedded offline planner (recorded in the trace)."),
        click.option("--timeout", "timeout_s", type=click.FloatRange(1, 3600), default=None,
                     help="Seconds per model reply (default: UMMAYA_LLM_TIMEOUT_S, else the profile's)."),
        click.option("--context-tokens", type=click.IntRange(256, 10_000_000), default=None,
                     help="The model's context in tokens: the whole prompt plus the reply must fit (default: UMMAYA_LLM_CONTEXT_TOKENS, else the profile's)."),
        click.option("--deadline", "deadline_s", type=click.FloatRange(1, 7200), default=None,
                     help="Seconds for the whole turn (default: UMMAYA_TURN_DEADLINE_S, else the profile's, else 120)."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def make_model_planner(planner: str, base_url: str | None, model: str | None, profile: str | None,
                       fallback: str | None, timeout_s: float | None, context_tokens: int | None) -> Any:
    """The planner the options name: ``"offline"`` as is, else the OpenAI-compatible one (a
    configuration error is a ``ProviderConfigError`` naming the variable)."""
    if planner != "openai":
        return planner
    from ummaya.runtime.plan.choice import make_planner

    return make_planner("openai", fallback=fallback, base_url=base_url, model=model, profile=profile,
                        timeout_s=timeout_s, context_tokens=context_tokens)
