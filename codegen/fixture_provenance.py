"""Fixture provenance: every fixture says where its body came from.

``source: recorded`` (taken from the live service by ``ummaya record``; ``recorded_on`` is the
date), ``documented`` (written from the guide; ``guide: {name, version}``) or ``synthetic`` (made
up in the real shape; personal data masked the way the service masks it). The link stage requires
the declaration; ``ummaya check`` prints the share of each kind per adapter and llms/ pages show it.
"""

from __future__ import annotations

from collections import Counter

from .loader import LoadedManifest, Problem
from ummaya.model.manifest import Manifest

SOURCES = ("recorded", "documented", "synthetic")


def check_provenance(lm: LoadedManifest) -> list[Problem]:
    src = lm.source
    out = []
    for i, fx in enumerate(lm.manifest.fixtures):
        if fx.source is None:
            out.append(
                Problem(
                    src.rel,
                    src.line_of(("fixtures", i, "name")),
                    f"fixtures.{i} ({fx.name}): no 'source' — declare recorded (with recorded_on), "
                    "documented (with guide: {name, version}) or synthetic",
                )
            )
    return out


def shares(m: Manifest) -> dict[str, int]:
    """Fixture count per source kind (undeclared ones counted as 'undeclared')."""
    counts = Counter(fx.source or "undeclared" for fx in m.fixtures)
    return {k: counts[k] for k in (*SOURCES, "undeclared") if counts[k]}


def share_text(m: Manifest) -> str:
    """'recorded 1/4 (25%), documented 2/4 (50%), synthetic 1/4 (25%)' — or '' without fixtures."""
    total = len(m.fixtures)
    if not total:
        return ""
    return ", ".join(
        f"{kind} {n}/{total} ({round(100 * n / total)}%)" for kind, n in shares(m).items()
    )
