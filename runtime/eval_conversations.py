"""The conversation evaluation (``ummaya eval conversations``): evals/conversations.yaml.

Each conversation runs in a fresh session on the embedded default (offline planner, Mock
dispatch, a throwaway SQLite store, so the dialogue state really is saved and loaded between
turns). It passes when every turn meets its ``expect`` (the scenario vocabulary) and no
personal-data value appears in any upstream URL or call argument of any turn.

The held-out split is decided by the id alone (sha1, first hex digit 0–4), so adding a
conversation never moves another one; it is scored only at the end, never used for tuning.
"""

from __future__ import annotations

import asyncio
import hashlib
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from .scenarios import Scenario, Turn, check

Category = Literal["answer_to_own_question", "elliptical_followup", "deixis", "topic_switch", "personal_data"]
CATEGORIES: tuple[str, ...] = ("answer_to_own_question", "elliptical_followup", "deixis", "topic_switch", "personal_data")
TARGETS = {"dev": 0.95, "heldout": 0.90}


class Conversation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[a-z0-9_]+$")
    category: Category
    mode: Literal["auto", "live", "mock"] = "mock"
    policy: Literal["default", "lookup_only"] | None = None
    consents: list[str] = Field(default_factory=list)
    turns: list[Turn] = Field(min_length=1)

    @property
    def split(self) -> str:
        return split_of(self.id)

    def scenario(self) -> Scenario:
        return Scenario(id=self.id, mode=self.mode, policy=self.policy, consents=self.consents, turns=self.turns)


class ConversationSet(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: Literal[1] = 1
    conversations: list[Conversation]


def split_of(conversation_id: str) -> str:
    return "heldout" if hashlib.sha1(conversation_id.encode("utf-8")).hexdigest()[0] in "01234" else "dev"


def load_conversations(path: Path) -> list[Conversation]:
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    convs = ConversationSet.model_validate(data).conversations
    seen: set[str] = set()
    for c in convs:
        if c.id in seen:
            raise ValueError(f"{path}: duplicate conversation id {c.id!r}")
        seen.add(c.id)
    return convs


def personal_leaks(results: list[Any]) -> list[str]:
    """Every personal-data value found in an upstream URL or call argument (kind and where)."""
    from urllib.parse import unquote_plus

    from .guard.personal import contains_personal
    from ummaya.wire.redact import find_personal

    out = []
    for n, r in enumerate(results, 1):
        for c in r.calls:
            url = c.get("upstream_url") or ""
            kinds = [f.kind for f in find_personal(url)] + [f.kind for f in find_personal(unquote_plus(url))]
            kinds += contains_personal(c.get("arguments") or {})
            if kinds:
                out.append(f"turn {n}: {c['adapter_id']}: {sorted(set(kinds))} left the machine")
    return out


@dataclass
class ConversationOutcome:
    conversation: Conversation
    problems: list[str] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.problems


async def run_conversation(engine: Any, conv: Conversation) -> ConversationOutcome:
    from .scenarios import turn_request

    sc = conv.scenario()
    session_id = f"eval-{conv.id}-{uuid.uuid4().hex[:8]}"
    outcome = ConversationOutcome(conv)
    consents: tuple[str, ...] = tuple(conv.consents)
    for n, turn in enumerate(conv.turns, 1):
        consents = consents + tuple(c for c in turn.consents if c not in consents)
        result = await engine.ask(turn_request(sc, turn, session_id, consents))
        outcome.results.append(result)
        label = f"turn {n} ({turn.request!r}): "
        outcome.problems += [label + p for p in check(turn.expect, result, turn.language)]
    outcome.problems += personal_leaks(outcome.results)
    return outcome


@dataclass
class Report:
    outcomes: list[ConversationOutcome]
    split: str = "all"

    def rate(self, rows: list[ConversationOutcome]) -> dict[str, Any]:
        n = len(rows)
        passed = sum(o.passed for o in rows)
        return {"n": n, "passed": passed, "rate": round(passed / n, 4) if n else None}

    def as_dict(self) -> dict[str, Any]:
        rows = self.outcomes
        by_split = {s: self.rate([o for o in rows if o.conversation.split == s]) for s in ("dev", "heldout")}
        leaks = sum(1 for o in rows for p in o.problems if "left the machine" in p)
        return {
            "split": self.split,
            "overall": self.rate(rows),
            "splits": {s: v for s, v in by_split.items() if v["n"]},
            "categories": {c: self.rate([o for o in rows if o.conversation.category == c]) for c in CATEGORIES
                           if any(o.conversation.category == c for o in rows)},
            "personal_data_leaks": leaks,
            "targets": TARGETS,
            "below": self.below(),
            "failures": [{"id": o.conversation.id, "category": o.conversation.category,
                          "split": o.conversation.split, "problems": o.problems} for o in rows if not o.passed],
        }

    def below(self) -> list[str]:
        out = []
        for s, target in TARGETS.items():
            r = self.rate([o for o in self.outcomes if o.conversation.split == s])
            if r["n"] and r["rate"] < target:
                out.append(f"{s} pass rate {r['rate']:.3f} < {target}")
        if any("left the machine" in p for o in self.outcomes for p in o.problems):
            out.append("personal data reached an upstream")
        return out


def format_table(rep: Report) -> str:
    d = rep.as_dict()
    lines = [f"conversations ({d['split']}): {d['overall']['passed']}/{d['overall']['n']} passed ({d['overall']['rate']:.1%})"]
    for s, v in d["splits"].items():
        lines.append(f"  {s:<8} {v['passed']:>4}/{v['n']:<4} {v['rate']:.1%}  (target ≥ {TARGETS[s]:.0%})")
    lines.append("  by category:")
    for c, v in d["categories"].items():
        lines.append(f"    {c:<24} {v['passed']:>4}/{v['n']:<4} {v['rate']:.1%}")
    lines.append(f"  personal-data values in upstream URLs or arguments: {d['personal_data_leaks']}")
    return "\n".join(lines)


def evaluate(conversations: list[Conversation], *, split: str = "all", generated: Path | None = None,
             engine: Any = None) -> Report:
    """Run the conversations (``split``: dev | heldout | all) on the embedded default."""
    chosen = [c for c in conversations if split == "all" or c.split == split]

    async def run_all(engine: Any) -> list[ConversationOutcome]:
        return [await run_conversation(engine, c) for c in chosen]

    if engine is not None:
        return Report(asyncio.run(run_all(engine)), split)
    from .assemble import build_engine
    from .store import open_store

    with tempfile.TemporaryDirectory(prefix="ummaya-eval-") as tmp:
        store = open_store(f"sqlite:///{tmp}/eval.sqlite3")
        try:
            from .assemble import fixed_clock
            from .scenarios import SCENARIO_CLOCK

            # The conversations run at the scenarios' pinned moment (same dates everywhere).
            eng = build_engine(generated, store=store, clock=fixed_clock(SCENARIO_CLOCK))
            return Report(asyncio.run(run_all(eng)), split)
        finally:
            store.close()


__all__ = ["Conversation", "ConversationOutcome", "Report", "evaluate", "format_table", "load_conversations",
           "personal_leaks", "split_of", "CATEGORIES", "TARGETS"]
