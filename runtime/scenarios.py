"""Declarative end-to-end scenarios: ``registry/scenarios/*.yaml``.

A scenario is a citizen request (or a conversation of several) and what must happen: the call
chain, the stop reason and facts the answer must state. They run on the embedded default (offline
planner, Mock dispatch, ``scenario_engine``) through ``run_scenario``, whose ``check`` is the one
comparison: the tests (tests/turn/test_scenarios.py) and ``ummaya check`` (ci/scenario_gate.py) both
run every scenario that way, so the gate cannot pass a scenario the tests fail. ``ummaya check``
also validates every file against this schema and fails when an adapter appears in no scenario.

A scenario has either ``request`` + ``expect`` (one turn) or ``turns:`` (several turns sharing one
session, run in order)::

    scenarios:
      - id: er_near_landmark
        request: 동아대 승학캠퍼스 근처 응급실 알려줘
        language: ko            # optional: the answer must be in this language (ko | en)
        mode: mock              # optional, default mock (auto | live | mock)
        policy: default         # optional: default | lookup_only
        consents: []            # optional: adapter ids granted up front
        expect:
          calls: [kakao_keyword_search, nmc_emergency_rooms]
          stop_reason: completed
          tiers: [mock, mock]                 # optional
          statuses: [ok, ok]                  # optional
          answer_contains: [동아대학교병원]
          answer_not_contains: []
          grounded: true                      # optional
      - id: er_answer_to_own_question
        turns:
          - request: 근처 응급실 알려줘
            expect: {calls: [], stop_reason: needs_input}
          - request: 하단동
            consents: []        # optional: granted before this turn
            expect:
              calls: [kakao_keyword_search, nmc_emergency_rooms]
              stop_reason: completed

Unknown keys are errors, ``stop_reason`` must be one of ``events.STOP_REASONS``, every adapter id in
``calls`` and ``consents`` must exist in the catalog, and each error is ``path:line: message``.
Scenarios never depend on each other: what one turn carries to the next is written as ``turns:``.
"""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from . import events

SCENARIOS_GLOB = "registry/scenarios/*.yaml"
# Every scenario runs at this moment (runtime/assemble.fixed_clock): an answer's dates — 내일, the
# forecast rows, Mock's recordings moved to today — are then the same on every machine and day.
SCENARIO_CLOCK = "2026-12-01T10:00:00+09:00"


def _known_adapter(value: str, info: ValidationInfo) -> str:
    known = (info.context or {}).get("adapters")
    if known is not None and value not in known:
        raise ValueError(f"unknown adapter '{value}' (not in the registry)")
    return value


# An adapter id, checked against the ids passed as validation context (``{"adapters": {...}}``).
AdapterId = Annotated[str, AfterValidator(_known_adapter)]


class Expect(BaseModel):
    model_config = ConfigDict(extra="forbid")
    calls: list[AdapterId] = Field(default_factory=list, description="Adapter ids called, in order")
    stop_reason: str
    tiers: list[Literal["live", "mock", "handoff"]] | None = None
    statuses: list[str] | None = None
    answer_contains: list[str] = Field(default_factory=list)
    answer_not_contains: list[str] = Field(default_factory=list)
    grounded: bool | None = None

    @field_validator("stop_reason")
    @classmethod
    def _stop_reason(cls, v: str) -> str:
        # Read at validation time: the closed list may grow (e.g. ``ungrounded``) without an edit here.
        if v not in events.STOP_REASONS:
            raise ValueError(f"unknown stop_reason '{v}' (one of: {', '.join(events.STOP_REASONS)})")
        return v


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    request: str = Field(min_length=1)
    consents: list[AdapterId] = Field(default_factory=list, description="Adapter ids granted before this turn")
    language: Literal["ko", "en"] | None = None
    expect: Expect


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[a-z0-9_]+$")
    mode: Literal["auto", "live", "mock"] = "mock"
    policy: Literal["default", "lookup_only"] | None = None
    consents: list[AdapterId] = Field(default_factory=list, description="Adapter ids granted up front")
    language: Literal["ko", "en"] | None = None
    # One turn …
    request: str | None = Field(default=None, min_length=1)
    expect: Expect | None = None
    # … or several in one session.
    turns: list[Turn] | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _one_form(self) -> Scenario:
        single = self.request is not None or self.expect is not None
        if self.turns is not None and single:
            raise ValueError("a scenario has either request + expect or turns, not both")
        if self.turns is None and (self.request is None or self.expect is None):
            raise ValueError("a scenario needs request + expect, or turns")
        return self

    def all_turns(self) -> list[Turn]:
        """The scenario as turns: a single-request scenario is one turn."""
        if self.turns is not None:
            return list(self.turns)
        assert self.request is not None and self.expect is not None
        return [Turn(request=self.request, language=self.language, expect=self.expect)]

    @property
    def calls(self) -> list[str]:
        """Every adapter id any turn expects to call (for coverage)."""
        return [a for t in self.all_turns() for a in t.expect.calls]


class ScenarioFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    scenarios: list[Scenario]


class ScenarioError(ValueError):
    """Every problem in the scenario files, each ``path:line: message``."""

    def __init__(self, problems: list[Any]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def catalog_ids(catalog: Path) -> set[str]:
    """The adapter ids of a compiled ``catalog.json`` (the one reader of the gate, the tests and
    ``ummaya eval turns``); OSError, ValueError or TypeError when it cannot be read as one."""
    import json

    data = json.loads(catalog.read_text(encoding="utf-8"))
    adapters = data.get("adapters", data) if isinstance(data, dict) else data
    if isinstance(adapters, dict):
        return set(adapters)
    if isinstance(adapters, list):
        return {a["id"] for a in adapters if isinstance(a, dict) and "id" in a}
    raise ValueError("no adapters in it")


def _catalog_ids(root: Path) -> set[str] | None:
    try:
        return catalog_ids(root / "generated" / "catalog.json")
    except (OSError, ValueError, TypeError):
        return None


def parse_scenario_file(path: Path, rel: str, adapters: set[str] | None = None) -> tuple[Any, ScenarioFile | None, list[Any]]:
    """One scenario file read and validated: (its document, its scenarios or None, its problems as
    ``rel:line``) — the one reader of the gate, the tests and ``ummaya eval turns``."""
    from ummaya.model.documents import Problem, parse_yaml, validation_problems

    doc, problems = parse_yaml(path, rel)
    if doc is None:
        return None, None, problems
    if not isinstance(doc.data, dict):
        return doc, None, [*problems, Problem(rel, 1, "a scenario file is a mapping with a 'scenarios:' list")]
    try:
        return doc, ScenarioFile.model_validate(doc.data, context={"adapters": adapters}), problems
    except ValidationError as exc:
        # pydantic words a validator's ValueError as "Value error, …": keep only the message.
        return doc, None, [*problems, *(dataclasses.replace(p, message=p.message.replace(": Value error, ", ": "))
                                        for p in validation_problems(doc, exc))]


def validate_scenarios(root: Path, adapters: set[str] | None = None) -> tuple[list[tuple[Path, Scenario]], list[Any]]:
    """Parse and validate every ``registry/scenarios/*.yaml``; returns the scenarios and every
    problem (``model.documents.Problem``: path, line, message). ``adapters``: the known ids (None →
    the built catalog's, when there is one)."""
    from ummaya.model.documents import Problem

    root = Path(root).resolve()
    if adapters is None:
        adapters = _catalog_ids(root)
    out: list[tuple[Path, Scenario]] = []
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    for path in sorted(root.glob(SCENARIOS_GLOB)):
        rel = path.relative_to(root).as_posix()
        doc, parsed, errs = parse_scenario_file(path, rel, adapters)
        problems += errs
        if doc is None or parsed is None:
            continue
        for i, sc in enumerate(parsed.scenarios):
            where = f"{rel}:{doc.line_of(('scenarios', i, 'id'))}"
            if sc.id in seen:
                problems.append(Problem(rel, doc.line_of(("scenarios", i, "id")), f"scenarios.{i}.id: duplicate scenario id '{sc.id}' (first at {seen[sc.id]})"))
                continue
            seen[sc.id] = where
            out.append((path, sc))
    return out, sorted(problems)


def load_scenarios(root: Path, adapters: set[str] | None = None) -> list[tuple[Path, Scenario]]:
    """Every scenario, or ``ScenarioError`` listing every problem."""
    out, problems = validate_scenarios(root, adapters)
    if problems:
        raise ScenarioError(problems)
    return out


@dataclass
class Outcome:
    scenario: Scenario
    problems: list[str] = field(default_factory=list)
    result: Any = None  # the last turn's result
    results: list[Any] = field(default_factory=list)


def check(expect: Expect | Scenario, result: Any, language: str | None = None) -> list[str]:
    """What ``result`` (a ``TurnResult``) got wrong against ``expect``."""
    if isinstance(expect, Scenario):  # one-turn scenario, kept for callers of the old signature
        turn = expect.all_turns()[0]
        expect, language = turn.expect, turn.language
    problems = []
    got_calls = [c["adapter_id"] for c in result.calls]
    if got_calls != expect.calls:
        problems.append(f"calls {got_calls} != expected {expect.calls}")
    if result.stop_reason != expect.stop_reason:
        problems.append(f"stop_reason {result.stop_reason!r} != expected {expect.stop_reason!r}")
    if expect.tiers is not None and [c["tier"] for c in result.calls] != expect.tiers:
        problems.append(f"tiers {[c['tier'] for c in result.calls]} != expected {expect.tiers}")
    if expect.statuses is not None and [c["status"] for c in result.calls] != expect.statuses:
        problems.append(f"statuses {[c['status'] for c in result.calls]} != expected {expect.statuses}")
    if language is not None and result.language != language:
        problems.append(f"language {result.language!r} != expected {language!r}")
    if expect.grounded is not None:
        grounded = getattr(result, "grounded", None)
        if grounded is None:
            grounded = result.stop_reason != "ungrounded"
        if bool(grounded) != expect.grounded:
            problems.append(f"grounded {grounded!r} != expected {expect.grounded!r}")
    for fact in expect.answer_contains:
        if fact not in result.answer:
            problems.append(f"answer does not state {fact!r}")
    for fact in expect.answer_not_contains:
        if fact in result.answer:
            problems.append(f"answer must not contain {fact!r}")
    return problems


def scenario_engine(generated: Path, *, store: Any, planner: Any = "offline", catalog: Any = None,
                    retriever: Any = None, retention: Any = None) -> Any:
    """The one engine every scenario runs on — the tests, ``ummaya check``, ``ummaya eval turns``
    and the promotion suite alike, so none of them can pass a scenario another fails.

    The build in ``generated`` (or ``catalog``/``retriever`` already loaded from it), no credentials
    (``env={}``: a scenario's verdict never depends on the keys of the machine it runs on; a
    ``mode: live`` scenario meets ``credential_missing`` everywhere), and the pinned
    ``SCENARIO_CLOCK`` for the turn, the planner and Mock's calendar. ``retention``: the trace
    policy (None = the environment's); a trace never changes a turn's result (turn_trace.py), so
    ``ummaya check`` runs with traces off and the verdict is the tests' own."""
    from .assemble import build_engine, fixed_clock
    from .catalog import Catalog
    from .dispatch import Dispatcher

    catalog = catalog if catalog is not None else Catalog.load(generated)
    clock = fixed_clock(SCENARIO_CLOCK)
    return build_engine(catalog.root, planner=planner, catalog=catalog, retriever=retriever,
                        dispatcher=Dispatcher(catalog, env={}, clock=clock), store=store, clock=clock,
                        retention=retention)


def turn_request(sc: Scenario, turn: Turn, session_id: str, consents: tuple[str, ...]) -> Any:
    """The engine request for one turn; ``policy`` is passed only when the engine knows it."""
    from .turn import TurnRequest

    kwargs: dict[str, Any] = {"session_id": session_id, "mode": sc.mode, "consents": consents}
    if sc.policy is not None and "policy" in {f.name for f in dataclasses.fields(TurnRequest)}:
        kwargs["policy"] = sc.policy
    return TurnRequest(turn.request, **kwargs)


async def run_scenario(engine: Any, sc: Scenario, session_prefix: str = "scn") -> Outcome:
    """Run every turn of ``sc`` in one fresh session, in order; problems name the turn."""
    # A fresh session each run: nothing carries over from another scenario or an earlier run.
    session_id = f"{session_prefix}-{sc.id}-{uuid.uuid4().hex[:8]}"
    outcome = Outcome(sc)
    turns = sc.all_turns()
    consents: tuple[str, ...] = tuple(sc.consents)
    for n, turn in enumerate(turns, 1):
        consents = consents + tuple(c for c in turn.consents if c not in consents)
        result = await engine.ask(turn_request(sc, turn, session_id, consents))
        outcome.results.append(result)
        outcome.result = result
        label = f"turn {n} ({turn.request!r}): " if len(turns) > 1 else ""
        outcome.problems += [label + p for p in check(turn.expect, result, turn.language or sc.language)]
        if outcome.problems:  # later turns build on this one: stop at the first wrong turn
            break
    return outcome
