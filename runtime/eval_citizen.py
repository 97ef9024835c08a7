"""``ummaya eval citizen``: is the answer useful to the citizen who asked? (evals/citizen.yaml)

Each request runs in a fresh session (its ``before`` messages first, in that session) on the
embedded default — offline planner unless another is given, Mock dispatch — at the file's pinned
``clock``. A request is *useful* when every key of its ``useful`` block holds:

- ``emergency_first``: the answer's first line names this number;
- ``adapters_any``: at least one of these adapters was called (proposed and let through the
  engine's checks: a consent notice for it counts, a refusal does not);
- ``official_channel``: the answer names an official channel — a web address or a phone number;
- ``channel_any`` / ``contains_any``: one of these strings appears (case-insensitive);
  ``not_contains``: none of these does;
- ``no_consent_notice``: no consent notice was shown (no ``consent_required`` permission, not the
  stop reason);
- ``stop_reason_any``: the turn stopped with one of these.

A request whose ``adapters_any`` names only adapters the registry does not have yet (rows of
docs/registry-plan.md) is *pending*: counted and listed, never scored. The split is fixed by the
id: held out when the first hex digit of sha1(id) is 0–4 — scored, never tuned on.

Besides the useful share (overall, dev, held-out, per scope and per domain) the report gives the
issue's own figures: emergencies whose first line names the number, out-of-scope requests that end
with an official channel or a plain "cannot" (the engine's way-out, limit or handoff part, or a
"cannot" sentence — an unrelated adapter's citation does not count), and out-of-scope requests
that reached a consent notice (the target is none).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import tempfile
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

Scope = Literal["emergency", "in", "partial", "out"]
SPLITS = ("dev", "heldout")

# A web address, or a phone number written as people write them (☎ 110, 1577-1000, 051-600-7575).
_CHANNEL = re.compile(r"https?://|www\.|☎|(?<!\d)(?:0\d{1,2}-\d{3,4}-\d{4}|1\d{3}-\d{4}|1[0-9]{2,3})(?!\d)")
_CANNOT = re.compile(r"수 없습니다|할 수 없|cannot|can't|can not|unable", re.I)


class Useful(BaseModel):
    model_config = ConfigDict(extra="forbid")
    emergency_first: str | None = None
    adapters_any: list[str] | None = None
    official_channel: bool | None = None
    channel_any: list[str] | None = None
    contains_any: list[str] | None = None
    not_contains: list[str] | None = None
    no_consent_notice: bool | None = None
    stop_reason_any: list[str] | None = None


class CitizenRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    request: str = Field(min_length=1)
    before: list[str] = Field(default_factory=list)
    domain: str
    scope: Scope
    language: Literal["ko", "en"]
    useful: Useful

    @property
    def split(self) -> str:
        return "heldout" if hashlib.sha1(self.id.encode("utf-8")).hexdigest()[0] in "01234" else "dev"


class CitizenFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: Literal[1]
    clock: str
    requests: list[CitizenRequest]


def load(path: Path) -> CitizenFile:
    raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    f = CitizenFile.model_validate(raw)
    ids = [r.id for r in f.requests]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise ValueError(f"{path}: duplicate ids: {', '.join(dupes)}")
    return f


@dataclass
class Row:
    id: str
    split: str
    scope: str
    domain: str
    language: str
    request: str
    pending: bool = False
    useful: bool = False
    problems: list[str] = field(default_factory=list)
    stop_reason: str = ""
    calls: list[str] = field(default_factory=list)
    first_line: str = ""
    emergency_first: bool | None = None  # emergencies: the number on the first line
    way_out: bool | None = None  # out of scope: an official channel or a plain "cannot"
    consent_notice: bool = False


def judge(req: CitizenRequest, result: Any, known: set[str]) -> Row:
    u = req.useful
    answer = result.answer or ""
    low = answer.lower()
    first = next((ln for ln in answer.splitlines() if ln.strip()), "")
    called = [c["adapter_id"] for c in result.calls if c.get("status") not in ("refused", "invalid")]
    consent = result.stop_reason == "consent_required" or any(
        e.type == "permission" and e.data.get("decision") == "consent_required" for e in result.events)
    row = Row(req.id, req.split, req.scope, req.domain, req.language, req.request, stop_reason=result.stop_reason,
              calls=called, first_line=first[:160], consent_notice=consent)
    p = row.problems
    if u.emergency_first is not None:
        ok = u.emergency_first in first
        row.emergency_first = ok
        if not ok:
            p.append(f"first line does not name {u.emergency_first}: {first[:80]!r}")
    if u.adapters_any:
        if not set(u.adapters_any) & set(called):
            p.append(f"none of {u.adapters_any} called (called {called or 'nothing'})")
    if u.official_channel and not _CHANNEL.search(answer):
        p.append("no official channel (site or phone) named")
    if u.channel_any and not any(s.lower() in low for s in u.channel_any):
        p.append(f"none of {u.channel_any} named")
    if u.contains_any and not any(s.lower() in low for s in u.contains_any):
        p.append(f"none of {u.contains_any} in the answer")
    for s in u.not_contains or []:
        if s.lower() in low:
            p.append(f"says {s!r}")
    if u.no_consent_notice and consent:
        p.append("a consent notice was shown")
    if u.stop_reason_any and result.stop_reason not in u.stop_reason_any:
        p.append(f"stopped {result.stop_reason}, not one of {u.stop_reason_any}")
    if req.scope == "out":
        # a way out: the engine's own way-out, limit or handoff part, or a plain "cannot" — a
        # citation's address under an unrelated adapter's answer is not one
        parts = {e.data.get("part") for e in result.events if e.type == "delta"}
        row.way_out = bool(parts & {"way_out", "limit", "handoff"}) or bool(_CANNOT.search(answer))
    row.useful = not p
    return row


def pending(req: CitizenRequest, known: set[str]) -> bool:
    return bool(req.useful.adapters_any) and not set(req.useful.adapters_any or ()) & known


@dataclass
class Report:
    rows: list[Row]
    planner: str = "offline"

    def scored(self, rows: list[Row] | None = None) -> list[Row]:
        return [r for r in (self.rows if rows is None else rows) if not r.pending]

    @staticmethod
    def share(rows: list[Row]) -> float | None:
        return round(sum(r.useful for r in rows) / len(rows), 4) if rows else None

    def groups(self, key: str) -> dict[str, list[Row]]:
        out: dict[str, list[Row]] = defaultdict(list)
        for r in self.scored():
            out[getattr(r, key)].append(r)
        return dict(sorted(out.items()))

    def figures(self) -> dict[str, Any]:
        scored = self.scored()
        em = [r for r in scored if r.emergency_first is not None]
        out = [r for r in scored if r.scope == "out"]
        return {
            "emergency_first": {"n": len(em), "share": round(sum(bool(r.emergency_first) for r in em) / len(em), 4) if em else None},
            "out_of_scope_way_out": {"n": len(out), "share": round(sum(bool(r.way_out) for r in out) / len(out), 4) if out else None},
            "out_of_scope_consent_notice": {"n": len(out), "share": round(sum(r.consent_notice for r in out) / len(out), 4) if out else None},
        }

    def as_dict(self) -> dict[str, Any]:
        scored = self.scored()
        return {
            "planner": self.planner,
            "requests": len(self.rows), "scored": len(scored), "pending": len(self.rows) - len(scored),
            "useful": self.share(scored),
            "splits": {s: {"n": len(g), "useful": self.share(g)} for s, g in self.groups("split").items()},
            "scopes": {s: {"n": len(g), "useful": self.share(g)} for s, g in self.groups("scope").items()},
            "domains": {s: {"n": len(g), "useful": self.share(g)} for s, g in self.groups("domain").items()},
            **self.figures(),
            "pending_requests": [{"id": r.id, "adapters": r.calls} for r in self.rows if r.pending],
            "failures": [{"id": r.id, "split": r.split, "scope": r.scope, "domain": r.domain, "request": r.request,
                          "stop_reason": r.stop_reason, "calls": r.calls, "problems": r.problems}
                         for r in scored if not r.useful],
        }


def _pct(x: float | None) -> str:
    return "   -  " if x is None else f"{x:6.1%}"


def format_report(rep: Report) -> str:
    d = rep.as_dict()
    lines = [f"planner {rep.planner}: {d['requests']} requests, {d['scored']} scored, {d['pending']} pending "
             "(their adapters are not in the registry yet)",
             f"  useful          {_pct(d['useful'])}  ({sum(r.useful for r in rep.scored())}/{d['scored']})"]
    for title, key in (("split", "splits"), ("scope", "scopes"), ("domain", "domains")):
        lines.append(f"  by {title}:")
        for name, g in d[key].items():
            lines.append(f"    {name:16} {_pct(g['useful'])}  (n {g['n']})")
    f = rep.figures()
    lines += [
        f"  emergency number on the first line   {_pct(f['emergency_first']['share'])}  (n {f['emergency_first']['n']})",
        f"  out of scope: channel or plain cannot {_pct(f['out_of_scope_way_out']['share'])}  (n {f['out_of_scope_way_out']['n']})",
        f"  out of scope: reached a consent notice {_pct(f['out_of_scope_consent_notice']['share'])}  (n {f['out_of_scope_consent_notice']['n']})",
    ]
    return "\n".join(lines)


async def run_request(engine: Any, req: CitizenRequest) -> Any:
    from .turn import TurnRequest

    session = f"citizen-{req.id}-{uuid.uuid4().hex[:8]}"
    for text in req.before:
        await engine.ask(TurnRequest(text, session_id=session, mode="mock"))
    return await engine.ask(TurnRequest(req.request, session_id=session, mode="mock"))


def evaluate(f: CitizenFile, *, split: str = "all", generated: Path | None = None, planner: Any = "offline",
             engine: Any = None, only: str | None = None) -> Report:
    """Run the chosen requests (``split``: dev | heldout | all) and judge each."""
    chosen = [r for r in f.requests if (split == "all" or r.split == split) and (not only or only in r.id)]

    async def run_all(eng: Any) -> list[Row]:
        known = set(eng.catalog.adapters)
        rows = []
        for req in chosen:
            if pending(req, known):
                rows.append(Row(req.id, req.split, req.scope, req.domain, req.language, req.request, pending=True,
                                calls=list(req.useful.adapters_any or [])))
                continue
            rows.append(judge(req, await run_request(eng, req), known))
        return rows

    if engine is not None:
        return Report(asyncio.run(run_all(engine)), getattr(engine.planner, "name", "offline"))
    from .assemble import build_engine, fixed_clock
    from .store import open_store

    with tempfile.TemporaryDirectory(prefix="ummaya-eval-citizen-") as tmp:
        store = open_store(f"sqlite:///{tmp}/eval.sqlite3")
        try:
            eng = build_engine(generated, planner=planner, store=store, clock=fixed_clock(f.clock))
            name = getattr(eng.planner, "model", None) or eng.planner.name
            return Report(asyncio.run(run_all(eng)), name)
        finally:
            store.close()


__all__ = ["CitizenFile", "CitizenRequest", "Report", "Row", "evaluate", "format_report", "judge", "load"]
