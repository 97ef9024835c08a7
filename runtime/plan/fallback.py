"""A planner that falls back to another when its provider fails (``--fallback offline``).

The model server is a channel like any upstream, and it fails like one (refused, 503, a stream cut,
a timeout). With a fallback configured, the turn goes on with the in-process offline planner from
that step — it reads the evidence already found like any planner — for the rest of the turn, so a
dead server costs one failed request per turn, not one per step. Every step after the switch says
so in the trace: the ``plan`` event names the planner that decided and carries ``fallback``
(``from``, ``code``, ``message``). Configuration errors (``provider_config``) are not a channel
failure and are raised: the operator must fix them, not be hidden from them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from .protocol import Action, PlanContext, Planner, ProviderError


class FallbackPlanner:
    def __init__(self, primary: Planner, fallback: Planner):
        self.primary = primary
        self.fallback = fallback
        self.name = primary.name
        self._fell_back: OrderedDict[str, dict[str, Any]] = OrderedDict()  # trace id -> why

    def __getattr__(self, name: str) -> Any:  # model, profile, turn_deadline_s … of the primary
        return getattr(self.primary, name)

    async def plan(self, ctx: PlanContext, on_delta: Callable[[str], None] | None = None) -> Action:
        why = self._fell_back.get(ctx.trace_id) if ctx.trace_id else None
        if why is None:
            try:
                return await self.primary.plan(ctx, on_delta)
            except ProviderError as exc:
                if exc.code == "provider_config":
                    raise
                why = {"from": self.primary.name, "code": exc.code, "message": exc.message}
                if ctx.trace_id:
                    self._fell_back[ctx.trace_id] = why
                    while len(self._fell_back) > 256:
                        self._fell_back.popitem(last=False)
        action = await self.fallback.plan(ctx, on_delta)
        action.planner = getattr(self.fallback, "name", "fallback")
        action.fallback = dict(why)
        return action

    async def aclose(self) -> None:
        close = getattr(self.primary, "aclose", None)
        if close is not None:
            await close()
