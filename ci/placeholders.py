"""Placeholder gate: an adapter still carrying ``ummaya new adapter``'s scaffold text is not done.

A scaffold builds (so a contributor can iterate on it), but ``ummaya check`` fails while any of
these remain, one ``path:line`` problem each, saying what to fill:

- a ``TODO`` (also ``FIXME``, ``TBD``) anywhere in the manifest's values — titles, agency names
  (「TODO 기관명」), hints, examples, paths, descriptions;
- an example URL (``example.com``/``.org``/``.net``, ``localhost``) or a citation that points at a
  portal's front page instead of the data set's own page;
- a fixture body that is still the scaffold's sample response (「예시 하나」) rather than a real
  captured one.

YAML comments are not data, so the scaffold's explanatory comments never trip it.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from ummaya.codegen.loader import LoadedManifest, Problem

from .scaffold_samples import NORMAL_XML

_MARKER = re.compile(r"(?<![A-Za-z])(TODO|FIXME|TBD)(?![A-Za-z])", re.IGNORECASE)
_EXAMPLE_HOSTS = re.compile(r"(^|\.)(example\.(com|org|net)|[^.]+\.example|localhost|127\.0\.0\.1)$", re.IGNORECASE)
# A citation must name the data set's page; these front pages are what the scaffold writes.
_PORTAL_ROOTS = {"www.data.go.kr", "data.go.kr"}

# What to fill, by the first key of the value's path (the message a contributor reads).
_WHAT = {
    "title": "the service's title as the agency names it",
    "summary": "one sentence on what it tells a citizen",
    "agency": "the agency's code and names (e.g. 국립중앙의료원 / National Medical Center)",
    "search_hints": "words citizens use for this service",
    "examples": "requests as citizens actually say them",
    "negative_examples": "look-alike requests and the adapter that serves them",
    "permission": "the consent notice (purpose, items, retention, the right to refuse)",
    "citation": "the data set's own page, title and legal basis",
    "upstream": "the upstream operation path, parameters and fields from the API documentation",
    "input_schema": "the input fields and their descriptions",
    "output_schema": "the output fields",
    "render": "the answer template",
    "handoff": "the official channel, its URL, steps and documents",
    "fixtures": "a real captured response and its expected output",
}


def _walk(value: Any, loc: tuple) -> list[tuple[tuple, str]]:
    out: list[tuple[tuple, str]] = []
    if isinstance(value, str):
        out.append((loc, value))
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str) and _MARKER.search(k):
                out.append(((*loc, k), k))
            out += _walk(v, (*loc, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _walk(v, (*loc, i))
    return out


def _dotted(loc: tuple) -> str:
    return ".".join(str(p) for p in loc) or "(document)"


def _scaffold_samples() -> set[bytes]:
    return {NORMAL_XML.encode("utf-8")}


def placeholder_problems(lm: LoadedManifest, samples: set[bytes] | None = None) -> list[Problem]:
    src = lm.source
    problems: list[Problem] = []
    for loc, text in _walk(src.data, ()):
        what = _WHAT.get(str(loc[0]) if loc else "", "a real value")
        marker = _MARKER.search(text)
        if marker:
            problems.append(Problem(src.rel, src.line_of(loc), f"{_dotted(loc)}: scaffold placeholder {text.strip()!r}: fill in {what}"))
            continue
        if "://" not in text:
            continue
        for url in re.findall(r"https?://[^\s\"'<>)]+", text):
            parts = urlsplit(url)
            host = (parts.hostname or "").lower()
            if _EXAMPLE_HOSTS.search(host):
                problems.append(Problem(src.rel, src.line_of(loc), f"{_dotted(loc)}: example URL {url!r}: fill in {what}"))
            elif loc[:1] == ("citation",) and host in _PORTAL_ROOTS and parts.path in ("", "/"):
                problems.append(Problem(src.rel, src.line_of(loc), f"{_dotted(loc)}: {url!r} is the portal's front page: cite the data set's own page (e.g. https://www.data.go.kr/data/15000563/openapi.do)"))
    samples = _scaffold_samples() if samples is None else samples
    for i, fx in enumerate(lm.manifest.fixtures):
        if fx.response is None:
            continue
        try:
            body = (lm.fixtures_dir / fx.response).read_bytes()
        except OSError:
            continue  # link reports a missing file
        if body in samples:
            problems.append(Problem(src.rel, src.line_of(("fixtures", i, "response")), f"fixtures.{i} ({fx.name}): {fx.response} is still the scaffold's sample response: record a real one (`ummaya record`) and its expected output"))
    return problems


def placeholder_gaps(registry) -> list[Problem]:
    """Every placeholder left in the registry's manifests, sorted by file and line."""
    samples = _scaffold_samples()
    out: list[Problem] = []
    for lm in registry.manifests:
        out += placeholder_problems(lm, samples)
    return sorted(out)
