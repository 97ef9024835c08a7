"""Answer templates (a manifest's ``render.ko`` / ``render.en``): one environment for the build and
the runtime, and the build's check that every template compiles and renders.

Templates run in jinja2's sandbox (upstream text is data and can never reach Python) with
``StrictUndefined`` (a misspelt variable is an error, never an empty string). The build compiles
both languages and renders each against every fixture's ``expected`` output — the same full adapter
output the runtime renders from — so a syntax error, an undefined variable or a filter that fails on
real data is a ``path:line`` error naming the template, not an answer that silently falls back to a
raw listing in front of a citizen.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jinja2 import StrictUndefined, Template, TemplateSyntaxError
from jinja2.sandbox import SandboxedEnvironment

LANGUAGES = ("ko", "en")

ENV = SandboxedEnvironment(autoescape=False, undefined=StrictUndefined)


@lru_cache(maxsize=1024)
def compile_template(source: str) -> Template:
    """The compiled template (cached by its text); raises ``TemplateSyntaxError``."""
    return ENV.from_string(source)


def has_content(output: dict[str, Any] | None) -> bool:
    """Whether an output is worth rendering: the runtime answers 「조회 결과가 없습니다」 otherwise."""
    if not output:
        return False
    items = output.get("items")
    return bool(items) if isinstance(items, list) else bool(output)


def render(source: str, output: dict[str, Any]) -> str:
    return compile_template(source).render(**output).strip()


def _template_line(exc: BaseException) -> int | None:
    """The template line a runtime error happened on: jinja rewrites tracebacks so template frames
    carry the template's own line numbers under the file name ``<template>``."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _first_line(lm: Any, lang: str) -> int:
    """The file line of the template's first line: the line after ``ko: |`` for a block scalar,
    the key's own line for an inline string."""
    key_line = lm.source.line_of(("render", lang))
    try:
        text = lm.source.path.read_text(encoding="utf-8").splitlines()[key_line - 1]
    except (OSError, IndexError):
        return key_line
    value = text.split(":", 1)[1].strip() if ":" in text else ""
    return key_line + 1 if value[:1] in ("|", ">") else key_line


def check_templates(lm: Any) -> list[Any]:
    """Problems (``codegen.loader.Problem``) in one loaded manifest's ``render`` templates."""
    from .loader import Problem

    m = lm.manifest
    if m.render is None:
        return []
    problems: list[Problem] = []
    for lang in LANGUAGES:
        source = getattr(m.render, lang)
        first = _first_line(lm, lang)
        where = f"render.{lang} (answer template of {m.id})"
        try:
            compile_template(source)
        except TemplateSyntaxError as exc:
            problems.append(Problem(lm.source.rel, first + (exc.lineno or 1) - 1, f"{where}: template syntax error: {exc.message}"))
            continue
        for fx in m.fixtures:
            if fx.expected is None or not has_content(fx.expected):
                continue
            try:
                render(source, fx.expected)
            except Exception as exc:  # noqa: BLE001 - any failure to phrase real data is the template's
                line = _template_line(exc)
                at = first + line - 1 if line else lm.source.line_of(("render", lang))
                msg = getattr(exc, "message", None) or str(exc)
                problems.append(Problem(lm.source.rel, at, f"{where}: fails on fixture '{fx.name}': {type(exc).__name__}: {msg}"))
                break  # one fixture is enough to show the mistake
    return problems
