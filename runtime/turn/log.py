"""The turn's event log: every stage speaks through it, the engine yields what it holds.

Stages call ``emit``; the engine hands the pending events to its caller after each stage
(``take``), so a stage function needs no generator plumbing and can be run alone in a test with a
fresh log.
"""

from __future__ import annotations

import time
from typing import Any

from ..events import Event


class TurnLog:
    def __init__(self, t0: float | None = None):
        self.t0 = time.perf_counter() if t0 is None else t0
        self.events: list[Event] = []
        self.states: list[dict[str, Any]] = []
        self.stage = "context"  # the stage running now: a deadline names it as the layer
        self._taken = 0

    def ms(self) -> float:
        return round((time.perf_counter() - self.t0) * 1000, 3)

    def emit(self, type_: str, stage: str, **data: Any) -> Event:
        e = Event(seq=len(self.events), type=type_, stage=stage, t_ms=self.ms(), data=data)
        self.events.append(e)
        return e

    def take(self) -> list[Event]:
        """The events emitted since the last ``take``."""
        out = self.events[self._taken:]
        self._taken = len(self.events)
        return out

    def state(self, name: str) -> None:
        self.states.append({"state": name, "t_ms": self.ms()})
