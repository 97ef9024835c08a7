"""Answer templates (a manifest's ``render.ko`` / ``render.en``): one environment for the build and
the runtime, and the build's check that every template compiles and renders.

Templates run in jinja2's immutable sandbox (upstream text is data and can never reach Python;
no template changes a list or dict it is given) with ``StrictUndefined`` (a misspelt variable is
an error, never an empty string). The build compiles both languages and renders each against every
fixture's ``expected`` output — the same full adapter output the runtime renders from — so a syntax
error, an undefined variable or a filter that fails on real data is a ``path:line`` error naming
the template, not an answer that silently falls back to a raw listing in front of a citizen.

**A template runs under a budget**, at build time and at run time alike (issue 19 hole 5: nested
``range(100000)`` loops kept ``ummaya build`` busy past 120 s). One render may take at most
``MAX_RENDER_S`` seconds, ``MAX_STEPS`` loop iterations (every ``for``, nested ones counted
together), build no string or list longer than ``MAX_VALUE`` (``*``, ``**``, ``+``, ``~``,
``%``-formatting, ``center``/``indent``/``slice``/``format`` widths are checked before they
allocate) and write at most ``MAX_OUTPUT`` characters. Past any of them the render stops with
``TemplateBudget`` — in the build a ``path:line`` problem at the template line that ran over, at
run time the plain listing (logged).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import re
import time
from functools import lru_cache
from collections.abc import Iterator
from typing import Any

from jinja2 import StrictUndefined, Template, TemplateSyntaxError, nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

LANGUAGES = ("ko", "en")

MAX_RENDER_S = 1.0       # wall time of one render
MAX_STEPS = 20_000       # loop iterations per render (a fixture has tens of records)
MAX_VALUE = 50_000       # characters (or items) of any string or list a template builds
MAX_OUTPUT = 20_000      # characters of one rendered answer
MAX_INT_BITS = 4_096     # integers a template computes (10**10**10 would never finish)


class TemplateBudget(Exception):
    """A render went over its budget (time, loop steps, value size or output size)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class _Budget:
    __slots__ = ("deadline", "steps")

    def __init__(self, seconds: float):
        self.deadline = time.monotonic() + seconds
        self.steps = 0

    def tick(self, n: int = 1) -> None:
        self.steps += n
        if self.steps > MAX_STEPS:
            raise TemplateBudget(f"more than {MAX_STEPS} loop iterations in one render")
        if time.monotonic() > self.deadline:
            raise TemplateBudget(f"rendering took longer than {MAX_RENDER_S:g} s")


_CURRENT: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("ummaya_template_budget", default=None)


def _budget() -> _Budget:
    b = _CURRENT.get()
    if b is None:  # a template rendered outside render(): still bounded
        b = _Budget(MAX_RENDER_S)
        _CURRENT.set(b)
    return b


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (str, list, tuple, bytes)) else 0


def _checked(value: Any, what: str) -> Any:
    if _size(value) > MAX_VALUE:
        raise TemplateBudget(f"{what} builds a value of {_size(value)} characters (limit {MAX_VALUE})")
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        raise TemplateBudget(f"{what} builds an integer of {value.bit_length()} bits")
    return value


_WIDTH = re.compile(r"(\d{4,})")


def _widths_ok(spec: Any, what: str) -> None:
    """%-format and str.format specs: a width or precision past MAX_VALUE would allocate it."""
    if isinstance(spec, str):
        for m in _WIDTH.finditer(spec):
            if int(m.group(1)) > MAX_VALUE:
                raise TemplateBudget(f"{what}: a width of {m.group(1)} characters")


class BudgetedEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox with every loop, size-changing operator and sizing filter on the budget."""

    intercepted_binops = frozenset({"*", "**", "+", "%", "//"})

    def call_binop(self, context: Any, op: str, left: Any, right: Any) -> Any:
        _budget().tick(0)
        if op == "*":
            n = right if isinstance(right, int) else left if isinstance(left, int) else None
            seq = left if _size(left) else right
            if n is not None and _size(seq) * max(int(n), 0) > MAX_VALUE:
                raise TemplateBudget(f"'*' would build {_size(seq) * int(n)} characters (limit {MAX_VALUE})")
            if isinstance(left, int) and isinstance(right, int) and left.bit_length() + right.bit_length() > MAX_INT_BITS:
                raise TemplateBudget("'*' would build an integer too large to print")
        elif op == "**":
            if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
                if right * math.log2(abs(left)) > MAX_INT_BITS:
                    raise TemplateBudget(f"'**' would build an integer of about {int(right * math.log2(abs(left)))} bits")
        elif op == "%":
            _widths_ok(left, "'%' formatting")
        return _checked(super().call_binop(context, op, left, right), f"'{op}'")

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        _budget().tick(0)
        if getattr(__obj, "__name__", "") in ("format", "format_map"):
            # The sandbox hands templates a wrapper of str.format (functools.update_wrapper).
            owner = getattr(getattr(__obj, "__wrapped__", __obj), "__self__", None)
            _widths_ok(owner, "str.format")
        return _checked(ImmutableSandboxedEnvironment.call(__self, __context, __obj, *args, **kwargs), "a call")

    def budget_iter(self, iterable: Any) -> Any:
        """Every ``for`` loop iterates through this (wired in by ``_parse``)."""
        b = _budget()
        for item in iterable:
            b.tick()
            yield item

    def budget_concat(self, value: Any) -> Any:
        return _checked(value, "'~'")

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        for loop in tree.find_all(nodes.For):
            loop.iter = _env_call("budget_iter", loop.iter)
        for concat in list(tree.find_all(nodes.Concat)):
            _replace(tree, concat, _env_call("budget_concat", concat))
        return tree


def _env_call(name: str, arg: nodes.Node) -> nodes.Call:
    call = nodes.Call(nodes.EnvironmentAttribute(name), [arg], [], None, None)
    call.set_lineno(arg.lineno or 1)
    return call


def _replace(tree: nodes.Node, old: nodes.Node, new: nodes.Node) -> None:
    """Put ``new`` where ``old`` is, in whatever field of whichever parent holds it."""
    for parent in tree.find_all(nodes.Node):
        for field in parent.fields:
            value = getattr(parent, field, None)
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list) and any(v is old for v in value):
                setattr(parent, field, [new if v is old else v for v in value])
                return


def _sized_filter(name: str, *positions: int) -> Any:
    """A jinja filter whose size arguments (by position after the value, or by keyword) are
    checked before it runs."""
    from jinja2 import filters

    real = filters.FILTERS[name]
    keywords = real.__code__.co_varnames[: real.__code__.co_argcount]
    # truncate and wordwrap take the environment first (@pass_environment): the wrapper must carry
    # the same marker, or jinja passes the value where the filter expects the environment.
    passes = getattr(real, "jinja_pass_arg", None)
    shift = 1 if passes is not None else 0

    def sized(*args: Any, **kwargs: Any) -> Any:
        _budget().tick(0)
        for i in positions:
            at = i + shift
            value = args[at] if at < len(args) else kwargs.get(keywords[at])
            if isinstance(value, int) and value > MAX_VALUE:
                raise TemplateBudget(f"filter '{name}' asked for {value} (limit {MAX_VALUE})")
        return _checked(real(*args, **kwargs), f"filter '{name}'")

    if passes is not None:
        sized.jinja_pass_arg = passes  # type: ignore[attr-defined]
    return sized


ENV = BudgetedEnvironment(autoescape=False, undefined=StrictUndefined)
ENV.globals.pop("lipsum", None)  # generates text by the paragraph: nothing an answer needs
for _name, _pos in (("center", (1,)), ("indent", (1,)), ("slice", (1,)), ("batch", (1,)),
                    ("wordwrap", (1,)), ("truncate", (1,))):
    ENV.filters[_name] = _sized_filter(_name, *_pos)
_real_format = ENV.filters["format"]


def _format(value: Any, *args: Any, **kwargs: Any) -> Any:
    _widths_ok(value, "filter 'format'")
    return _checked(_real_format(value, *args, **kwargs), "filter 'format'")


ENV.filters["format"] = _format


@lru_cache(maxsize=1024)
def compile_template(source: str) -> Template:
    """The compiled template (cached by its text); raises ``TemplateSyntaxError``."""
    if _CODE_DIR is None:
        return ENV.from_string(source)
    return ENV.template_class.from_code(ENV, _compiled_code(source), ENV.make_globals(None), None)


# Compiling a template (jinja's lexer, parser and code generator, then Python's compile) costs
# ~5 ms; ``ummaya check`` runs every scenario in spawned workers that would each compile the same
# 200-odd templates again. ``code_cache`` (opt-in: the build and the check call it with the
# emit cache) keeps each template's code object (marshal) on disk under the hash of its text, the
# Python and jinja versions and this module (whose ``_parse`` rewrites the tree): a template whose
# text or compiler changed is compiled again; a syntax error is never stored (it raises first).
_CODE_DIR: str | None = None


@contextlib.contextmanager
def code_cache(folder: Any) -> Iterator[None]:
    """Within the block, keep compiled templates in ``folder`` (None: in memory only)."""
    global _CODE_DIR
    before, _CODE_DIR = _CODE_DIR, None if folder is None else str(folder)
    try:
        yield
    finally:
        _CODE_DIR = before


@lru_cache(maxsize=1)
def _compiler_key() -> str:
    import hashlib
    import sys

    import jinja2

    with open(__file__, "rb") as fh:
        own = hashlib.sha256(fh.read()).hexdigest()
    return f"{sys.version}|{sys.implementation.cache_tag}|jinja2 {jinja2.__version__}|{own}"


def _compiled_code(source: str) -> Any:
    import hashlib
    import marshal
    import os

    key = hashlib.sha256(f"{_compiler_key()}|{source}".encode()).hexdigest()
    path = os.path.join(_CODE_DIR or "", key[:2], f"{key}.code")
    try:
        with open(path, "rb") as fh:
            return marshal.load(fh)
    except (OSError, EOFError, ValueError, TypeError):
        pass
    code = ENV.compile(source)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            marshal.dump(code, fh)
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written is only slower
    return code


def has_content(output: dict[str, Any] | None) -> bool:
    """Whether an output is worth rendering: the runtime answers 「조회 결과가 없습니다」 otherwise."""
    if not output:
        return False
    items = output.get("items")
    return bool(items) if isinstance(items, list) else bool(output)


def render(source: str, output: dict[str, Any], *, seconds: float = MAX_RENDER_S) -> str:
    """The template rendered against ``output``, within the budget (``TemplateBudget`` past it)."""
    template = compile_template(source)
    token = _CURRENT.set(_Budget(seconds))
    try:
        parts: list[str] = []
        size = 0
        for piece in template.generate(**output):
            size += len(piece)
            if size > MAX_OUTPUT:
                raise TemplateBudget(f"the answer is longer than {MAX_OUTPUT} characters")
            parts.append(piece)
            _budget().tick(0)
        return "".join(parts).strip()
    finally:
        _CURRENT.reset(token)


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
    """Problems (``model.documents.Problem``) in one loaded manifest's ``render`` templates."""
    from .documents import Problem

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
