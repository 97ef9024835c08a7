"""Dialogue state: what a session remembers between turns, as one typed model.

The design's context assembly packages "session state, prior results, policy mode, runtime facts";
this is that package. It is stored with the session (SQLite or PostgreSQL, column
``sessions.dialogue``), expires with it, and is written into every trace as a ``dialogue`` event so
anyone can see what a turn carried over.

What is kept is deliberately small and typed: the question the engine asked and is waiting on, the
last intent (adapter, primitive, arguments), the resolved place, names and references later steps
may reuse, and the session's language and policy mode. Personal values (names, birth dates,
phones) are never kept here: arguments are stored only for non-personal fields.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Policy = Literal["default", "lookup_only"]
POLICIES: tuple[str, ...] = ("default", "lookup_only")

# Which slot types are personal (never carried, never stored), say *where* (a follow-up naming a new
# place replaces all of them at once) or *when* is the slot table's to say (registry/_slots/,
# runtime/understand/table.py): the dialogue asks it by facet, never by name.


def session_ttl() -> dt.timedelta:
    """How long an idle conversation is remembered (``UMMAYA_SESSION_TTL_MIN``, default 60)."""
    try:
        minutes = float(os.environ.get("UMMAYA_SESSION_TTL_MIN", "60"))
    except ValueError:
        minutes = 60.0
    return dt.timedelta(minutes=max(minutes, 0.0))


class PendingQuestion(BaseModel):
    """The engine asked the citizen for something and waits for the answer."""

    model_config = ConfigDict(extra="ignore")
    adapter_id: str
    missing: list[str] = Field(default_factory=list, description="slot types asked for")
    arguments: dict[str, Any] = Field(default_factory=dict, description="filled so far (non-personal)")
    kind: Literal["input", "consent"] = "input"


class Intent(BaseModel):
    model_config = ConfigDict(extra="ignore")
    adapter_id: str
    primitive: str
    arguments: dict[str, Any] = Field(default_factory=dict, description="non-personal arguments")
    slots: dict[str, Any] = Field(default_factory=dict, description="slot type -> value used")


class Place(BaseModel):
    """A place the conversation resolved: the carried slots that say where (its name, address,
    coordinates, region), by slot name, as far as known — which slots those are is the slot
    table's to say (registry/_slots/), so the model declares no field of its own."""

    model_config = ConfigDict(extra="allow")

    @property
    def values(self) -> dict[str, Any]:
        return self.__pydantic_extra__ if self.__pydantic_extra__ is not None else {}

    def slots(self) -> dict[str, Any]:
        return {k: v for k, v in self.values.items() if v is not None}

    @classmethod
    def from_slots(cls, slots: dict[str, Any]) -> "Place | None":
        from ..understand import table

        keep = table.carried() & table.names_with("where")
        values = {k: v for k, v in slots.items() if k in keep and v is not None}
        return cls(**values) if values else None

    def _set(self, key: str, value: Any) -> None:
        if self.__pydantic_extra__ is None:
            self.__pydantic_extra__ = {}
        self.__pydantic_extra__[key] = value

    def _key(self, predicate: Any, present: bool = True) -> str | None:
        from ..understand import table

        for name, st in table.slot_table().slots.items():
            if predicate(st) and (not present or self.values.get(name) is not None):
                return name
        return None

    @property
    def name(self) -> str | None:
        """The place as the citizen (or a locate step) named it."""
        key = self._key(lambda s: s.class_ == "place" and s.carried)
        return str(self.values[key]) if key else None

    def set_name(self, name: str) -> None:
        key = self._key(lambda s: s.class_ == "place" and s.carried, present=False)
        if key is not None:
            self._set(key, name)

    def region_value(self, level: str) -> Any:
        key = self._key(lambda s: s.region_level == level and s.carried)
        return self.values.get(key) if key else None

    def set_region(self, region: Any) -> None:
        """Fill the carried region slots the place does not have yet from a resolved region."""
        from ..understand import table

        for name, st in table.slot_table().slots.items():
            if not st.carried or st.region_level is None or self.values.get(name) is not None:
                continue
            value = {"sido": region.sido_full, "sigungu": region.sigungu}.get(st.region_level)
            if value is not None:
                self._set(name, value)


class RuntimeFacts(BaseModel):
    model_config = ConfigDict(extra="ignore")
    now_kst: str | None = None  # ISO time the last turn ran, in KST


class DialogueState(BaseModel):
    """Everything one session carries from a turn to the next."""

    model_config = ConfigDict(extra="ignore")
    version: Literal[1] = 1
    pending: PendingQuestion | None = None
    last_intent: Intent | None = None
    place: Place | None = None
    # Names and references later steps may reuse: benefit_name, drug_name, service_name,
    # receipt_number, application_id … (from arguments and evidence, never personal data).
    references: dict[str, str] = Field(default_factory=dict)
    # The day(s) the conversation is about (ISO dates), so a follow-up that changes the place keeps
    # the day: 「모레 부산 날씨」 then 「서울은?」 is 모레 in Seoul (runtime/turn/days.py).
    days: list[str] = Field(default_factory=list)
    # Keyed digests (never the values) of personal values the citizen typed in earlier turns, so
    # argument provenance can accept a name given before a consent step (dialogue/given.py).
    given: list[str] = Field(default_factory=list)
    language: Literal["ko", "en"] | None = None
    policy: Policy = "default"
    facts: RuntimeFacts = Field(default_factory=RuntimeFacts)
    turns: int = 0
    expires_at: str | None = None  # ISO UTC; past it the state is forgotten

    def expired(self, now: dt.datetime | None = None) -> bool:
        if not self.expires_at:
            return False
        try:
            at = dt.datetime.fromisoformat(self.expires_at)
        except ValueError:
            return True
        now = now or dt.datetime.now(dt.timezone.utc)
        return at <= now

    def touch(self, now: dt.datetime | None = None) -> None:
        now = now or dt.datetime.now(dt.timezone.utc)
        self.expires_at = (now + session_ttl()).isoformat()

    def carried_slots(self) -> dict[str, Any]:
        """The slots a planner may fill from the state (the place only: other carried values go
        through the follow-up rules, which decide per message what is kept)."""
        return self.place.slots() if self.place else {}

    def view(self) -> dict[str, Any]:
        """The trace's view of the state (JSON)."""
        return self.model_dump(mode="json", exclude_none=True, exclude={"given"}) | {"given": len(self.given)}

    @classmethod
    def load(cls, data: Any) -> "DialogueState":
        """A stored state, or a fresh one when there is none, it is unreadable, or it expired."""
        if not data:
            return cls()
        try:
            state = cls.model_validate(data)
        except ValueError:
            return cls()
        return cls() if state.expired() else state


__all__ = ["DialogueState", "Intent", "PendingQuestion", "Place", "Policy", "POLICIES", "RuntimeFacts", "session_ttl"]
