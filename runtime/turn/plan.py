"""Stage 3, plan: one planner step over the candidates and the conversation so far.

The planner proposes one bounded action (call, ask, answer). Its text arrives as it is written;
``plan_step`` is an async generator: it yields ``None`` each time it has emitted a delta (so the
engine can pass it on while the model is still writing) and, last, the ``Planned`` value. Before any evidence the text is held until the step ends: it is grounded in
nothing yet, and a model often narrates before a tool call (「위치부터 찾아볼게요」) — narration that
must not become part of the answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from ..plan.base import PlanContext, Planner
from .log import TurnLog
from .values import Candidates, Planned, TurnContext, TurnState


async def plan_step(
    planner: Planner, ctx: TurnContext, cands: Candidates, st: TurnState, step: int, log: TurnLog,
) -> AsyncIterator[Planned | None]:
    log.stage = "plan"
    pctx = PlanContext(ctx.request, ctx.language, cands.manifests, st.messages,
                       [e for _, e in st.evidence], ctx.slots, step, st.repair,
                       dialogue=ctx.frame.hints if ctx.frame is not None else None)
    hold = not st.evidence
    held: list[str] = []
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    task = asyncio.ensure_future(planner.plan(pctx, on_delta=queue.put_nowait))
    task.add_done_callback(lambda _t: queue.put_nowait(None))
    streamed = False
    try:
        while (text := await _next(queue, ctx.deadline)) is not None:
            if hold:
                held.append(text)
                continue
            streamed = True
            st.deltas.append(text)
            log.emit("delta", "answer", text=text)
            yield None
        action = task.result()
    finally:
        if not task.done():  # the deadline fired (or the consumer went away): stop the model
            task.cancel()
    for k, v in action.usage.items():
        st.usage[k] = st.usage.get(k, 0) + v
    narration = "".join(held) if held and action.kind == "call" else ""
    log.emit("plan", "plan", planner=planner.name, action=action.kind, step=step,
             calls=[{"call_id": c.id, "adapter_id": c.adapter_id, "arguments": c.arguments} for c in action.calls],
             missing=action.missing, **({"narration": narration} if narration else {}))
    yield Planned(action, streamed=streamed, narration=narration)


async def _next(queue: asyncio.Queue[str | None], deadline: float | None) -> str | None:
    if deadline is None:
        return await queue.get()
    async with asyncio.timeout_at(deadline):
        return await queue.get()
