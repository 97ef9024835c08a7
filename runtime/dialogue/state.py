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

# Input-field slot types that hold personal data: never carried, never stored in the state.
PERSONAL_SLOTS = frozenset({
    "person_name", "birth_date", "phone", "email", "rrn", "resident_number", "card_number",
    "passport_number", "driver_licence", "vehicle_number", "income", "household_size",
})

# Slots that describe *where*: they belong to the place, not to the intent, so a follow-up naming a
# new place replaces all of them at once.
PLACE_SLOTS = frozenset({
    "latitude", "longitude", "coordinates", "place", "place_address", "region_name", "region_code",
    "sido_name", "sigungu_name", "city_code", "stop_name",
})

# Slots that describe *when*.
TIME_SLOTS = frozenset({"date", "time", "year"})


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
    """A place the conversation resolved: its name, coordinates and region, as far as known."""

    model_config = ConfigDict(extra="ignore")
    name: str | None = None
    address: str | None = None
    latitude: float | None = None
    longitude: float | None = None
    region_name: str | None = None
    region_code: str | None = None
    sido_name: str | None = None
    sigungu_name: str | None = None

    def slots(self) -> dict[str, Any]:
        out = {
            "place": self.name, "place_address": self.address, "latitude": self.latitude,
            "longitude": self.longitude, "region_name": self.region_name,
            "region_code": self.region_code, "sido_name": self.sido_name,
            "sigungu_name": self.sigungu_name,
        }
        return {k: v for k, v in out.items() if v is not None}

    @classmethod
    def from_slots(cls, slots: dict[str, Any]) -> "Place | None":
        fields = {
            "name": slots.get("place"), "address": slots.get("place_address"),
            "latitude": slots.get("latitude"), "longitude": slots.get("longitude"),
            "region_name": slots.get("region_name"), "region_code": slots.get("region_code"),
            "sido_name": slots.get("sido_name"), "sigungu_name": slots.get("sigungu_name"),
        }
        if all(v is None for v in fields.values()):
            return None
        try:
            return cls(**fields)
        except ValueError:
            return None


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


__all__ = [
    "DialogueState", "Intent", "PendingQuestion", "Place", "Policy", "POLICIES", "PERSONAL_SLOTS",
    "PLACE_SLOTS", "TIME_SLOTS", "RuntimeFacts", "session_ttl",
]
