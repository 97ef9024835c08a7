"""Coverage gates: what every adapter must carry before it ships.

Each gate is a plain check over a loaded manifest and reports ``path:line: message`` like the
loader does, so a contributor sees every gap in one run.
"""

from __future__ import annotations

from ummaya.codegen.loader import LoadedManifest, Problem, Registry

MIN_EXAMPLES = {"ko": 3, "en": 2}
MIN_LIVE_FIXTURES = 2
PROTECTED_GATES = ("login", "action", "sign", "send")


def adapter_gaps(lm: LoadedManifest, parsed: list[str] | None) -> list[Problem]:
    """Gaps in one adapter. ``parsed`` lists the fixtures the adapter's parser agreed with, or is
    None when the parser is not available (that check is then left to a later run, not faked)."""
    m, src = lm.manifest, lm.source
    out: list[Problem] = []

    def gap(loc: tuple, message: str) -> None:
        out.append(Problem(src.rel, src.line_of(loc), f"{m.id}: {message}"))

    for lang in ("ko", "en"):
        if not [h for h in getattr(m.search_hints, lang) if h.strip()]:
            gap(("search_hints", lang), f"search_hints.{lang} is empty (hints must be bilingual)")
        have = len([e for e in getattr(m.examples, lang) if e.strip()])
        if have < MIN_EXAMPLES[lang]:
            gap(("examples", lang), f"examples.{lang} has {have}, needs at least {MIN_EXAMPLES[lang]}")
    if not (m.citation.title.strip() and m.citation.url.strip()):
        gap(("citation",), "citation needs a title and a URL")
    if m.primitive in ("check", "send") and not (m.citation.basis or "").strip():
        gap(("citation",), f"a {m.primitive} adapter needs citation.basis (legal or policy basis)")
    if m.permission.gate in PROTECTED_GATES and m.permission.consent is None:
        gap(("permission",), f"gate '{m.permission.gate}' needs a consent notice")
    if m.tier == "handoff" and not (m.handoff and m.handoff.url.strip()):
        gap(("handoff",), "a handoff adapter needs an official channel URL (handoff.url)")
    if m.tier == "live":
        if len(m.fixtures) < MIN_LIVE_FIXTURES:
            gap(("fixtures",) if m.fixtures else ("tier",), f"a live adapter needs at least {MIN_LIVE_FIXTURES} fixtures (a normal response and an edge), has {len(m.fixtures)}")
        if not any(f.expected is not None for f in m.fixtures):
            gap(("fixtures",) if m.fixtures else ("tier",), "a live adapter needs a normal fixture (one with 'expected' output)")
    if parsed is not None:
        for i, fx in enumerate(m.fixtures):
            if fx.name not in parsed:
                gap(("fixtures", i), f"fixture '{fx.name}' does not parse through the adapter's parser to its expected result")
    return out


def coverage_gaps(registry: Registry, parsed: dict[str, list[str]] | None) -> list[Problem]:
    problems: list[Problem] = []
    for lm in registry.manifests:
        problems += adapter_gaps(lm, None if parsed is None else parsed.get(lm.id, []))
    return sorted(problems)
