"""Declarative end-to-end scenarios: ``registry/scenarios/*.yaml``.

A scenario is a citizen request and what must happen: the call chain, the stop reason and facts
the answer must state. They run on the embedded default (offline planner, Mock dispatch) as tests,
and ``ummaya check`` fails when an adapter appears in no scenario.

    scenarios:
      - id: er_near_landmark
        request: 동아대 승학캠퍼스 근처 응급실 알려줘
        session: busan          # optional: scenarios sharing a session run in file order
        consents: []            # adapter ids granted up front
        mode: mock              # default mock
        expect:
          calls: [kakao_keyword_search, nmc_emergency_rooms]
          stop_reason: completed
          tiers: [mock, mock]                 # optional
          answer_contains: [동아대학교병원]
          answer_not_contains: []
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from .events import STOP_REASONS


class Expect(BaseModel):
    model_config = ConfigDict(extra="forbid")
    calls: list[str] = Field(default_factory=list)
    stop_reason: str
    tiers: list[str] | None = None
    statuses: list[str] | None = None
    answer_contains: list[str] = Field(default_factory=list)
    answer_not_contains: list[str] = Field(default_factory=list)


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[a-z0-9_]+$")
    request: str
    session: str | None = None
    consents: list[str] = Field(default_factory=list)
    mode: str = "mock"
    expect: Expect


class ScenarioFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    scenarios: list[Scenario]


def load_scenarios(root: Path) -> list[tuple[Path, Scenario]]:
    out: list[tuple[Path, Scenario]] = []
    for path in sorted((root / "registry" / "scenarios").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for sc in ScenarioFile.model_validate(data).scenarios:
            if sc.expect.stop_reason not in STOP_REASONS:
                raise ValueError(f"{path}: {sc.id}: unknown stop_reason '{sc.expect.stop_reason}'")
            out.append((path, sc))
    return out


@dataclass
class Outcome:
    scenario: Scenario
    problems: list[str] = field(default_factory=list)
    result: Any = None


def check(sc: Scenario, result: Any) -> list[str]:
    problems = []
    got_calls = [c["adapter_id"] for c in result.calls]
    if got_calls != sc.expect.calls:
        problems.append(f"calls {got_calls} != expected {sc.expect.calls}")
    if result.stop_reason != sc.expect.stop_reason:
        problems.append(f"stop_reason {result.stop_reason!r} != expected {sc.expect.stop_reason!r}")
    if sc.expect.tiers is not None and [c["tier"] for c in result.calls] != sc.expect.tiers:
        problems.append(f"tiers {[c['tier'] for c in result.calls]} != expected {sc.expect.tiers}")
    if sc.expect.statuses is not None and [c["status"] for c in result.calls] != sc.expect.statuses:
        problems.append(f"statuses {[c['status'] for c in result.calls]} != expected {sc.expect.statuses}")
    for fact in sc.expect.answer_contains:
        if fact not in result.answer:
            problems.append(f"answer does not state {fact!r}")
    for fact in sc.expect.answer_not_contains:
        if fact in result.answer:
            problems.append(f"answer must not contain {fact!r}")
    return problems


async def run_scenario(engine: Any, sc: Scenario, session_prefix: str = "scn") -> Outcome:
    from .turn import TurnRequest

    session_id = f"{session_prefix}-{sc.session}" if sc.session else f"{session_prefix}-{sc.id}"
    req = TurnRequest(sc.request, session_id=session_id, mode=sc.mode, consents=tuple(sc.consents))  # type: ignore[arg-type]
    result = await engine.ask(req)
    return Outcome(sc, check(sc, result), result)
