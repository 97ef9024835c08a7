"""Stage 3, plan: one planner step over the candidates and the conversation so far.

The planner proposes one bounded action (call, ask, answer). Whatever text it writes while
deciding is held, never streamed: until the step ends nobody knows whether it is an answer, a
question or narration before a tool call (「위치부터 찾아볼게요」), and an answer still has to pass
the claim check (claims.py) before any of it reaches the citizen. Text that came before a tool call
is kept in the ``plan`` event as narration, never in the answer.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..plan.protocol import PlanContext, Planner
from .log import TurnLog
from .values import Candidates, Planned, TurnContext, TurnRequest, TurnState


async def plan_step(
    planner: Planner, ctx: TurnContext, cands: Candidates, st: TurnState, step: int, log: TurnLog,
    req: TurnRequest | None = None,
) -> Planned:
    log.stage = "plan"
    from ..dialogue.resolve import drop_rejected

    # What a correction rejects (「서울 말고」) is no part of the request a planner reads. The
    # turn's clock and carried slots are the same at every step (a model's prompt prefix with them).
    pctx = PlanContext(drop_rejected(ctx.request), ctx.language, cands.manifests, st.messages,
                       [e for _, e in st.evidence], ctx.slots, step, st.repair, st.repair_kind,
                       dialogue=ctx.frame.hints if ctx.frame is not None else None,
                       trace_id=ctx.trace_id, clock=ctx.clock, carried=st.carried,
                       max_steps=req.max_steps if req is not None else None,
                       context_tokens=req.context_budget_tokens if req is not None else None)
    held: list[str] = []
    if ctx.deadline is None:
        action = await planner.plan(pctx, on_delta=held.append)
    else:
        async with asyncio.timeout_at(ctx.deadline):
            action = await planner.plan(pctx, on_delta=held.append)
    for k, v in action.usage.items():
        st.usage[k] = st.usage.get(k, 0) + v
    # Narration is what the planner wrote beside its call — not the call itself, when the call was
    # written as text (a JSON fence is no narration).
    narration = ""
    if action.kind == "call":
        # A planner that reports its prompt cleaned its own text (a JSON fence is no narration).
        narration = action.text or ("" if action.prompt else "".join(held))
    extra: dict[str, Any] = {"narration": narration} if narration else {}
    if action.fallback:
        extra["fallback"] = action.fallback  # the planner fell back (--fallback offline), and why
    log.emit("plan", "plan", planner=action.planner or planner.name, action=action.kind, step=step,
             calls=[{"call_id": c.id, "adapter_id": c.adapter_id, "arguments": c.arguments} for c in action.calls],
             missing=action.missing, **extra)
    if action.prompt:
        # The whole prompt as sent: what it cost and what the budget trimmed to fit (says so).
        st.prompt = dict(action.prompt)
        log.emit("budget", "plan", step=step, **action.prompt)
    return Planned(action, narration=narration)
