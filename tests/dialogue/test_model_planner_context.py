"""A model planner sees how the engine read the message against the conversation, as data."""

from __future__ import annotations

from ummaya.runtime.dialogue import Hints
from ummaya.runtime.plan.protocol import PlanContext
from ummaya.runtime.plan.openai_compat import OpenAICompatPlanner


def test_conversation_reading_travels_as_session_data(catalog) -> None:
    planner = OpenAICompatPlanner("http://127.0.0.1:9", "k", "m")
    cands = [catalog.get("kma_short_term_forecast")]
    hints = Hints("followup", place=None, carried={"latitude": 37.5665, "longitude": 126.978},
                  pinned="kma_short_term_forecast")
    ctx = PlanContext("모레는?", "ko", cands, [{"role": "user", "content": "모레는?"}], [],
                      {"latitude": 37.5665}, 0, dialogue=hints)
    messages = planner.build_messages(ctx)
    user = next(m for m in messages if m["role"] == "user")["content"]
    assert '"continues": "kma_short_term_forecast"' in user and '"reading": "followup"' in user
    system = messages[0]["content"]
    assert "kma_short_term_forecast" not in system  # never in the engine's own instructions
    plain = planner.build_messages(PlanContext("부산 날씨", "ko", cands, [], [], {}, 0, dialogue=Hints("new")))
    assert "\"continues\"" not in str(plain) and "\"reading\"" not in str(plain)
