"""Options and output helpers shared by the commands."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

root_option = click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=str),
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
