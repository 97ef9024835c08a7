"""The planner a surface names: ``offline`` (the embedded planner) or ``openai`` (any
OpenAI-compatible endpoint, ``UMMAYA_LLM_*``), optionally with the offline planner as its fallback.

``TurnService.load`` (runtime/service.py) and the CLI's ``--planner`` read it here, below the
service that holds the engine's defaults, so the service and ``runtime/assemble.py`` (which builds
an engine through the service) do not import each other.
"""

from __future__ import annotations

from typing import Any, Literal, TypeGuard, get_args

PlannerName = Literal["offline", "openai"]


def _known(name: str) -> TypeGuard[PlannerName]:
    return name in get_args(PlannerName)


def planner_named(name: str) -> PlannerName:
    """``name`` as a planner name, or ValueError: names come from the command line and settings."""
    if _known(name):
        return name
    raise ValueError(f"unknown planner '{name}' ({', '.join(get_args(PlannerName))})")


def make_planner(name: PlannerName = "offline", *, fallback: str | None = None,
                 env: Any = None, clock: Any = None, **overrides: Any) -> Any:
    """The named planner. ``openai`` reads ``UMMAYA_LLM_*`` from ``env`` (default: the process
    environment) with ``overrides`` (base_url/model/profile/timeout_s/context_tokens …) on top;
    ``fallback="offline"`` wraps it so a failing provider hands the turn to the offline planner.
    ``clock`` pins the offline planner's "now" (scenarios and evals)."""
    if name == "offline":
        from .offline import OfflinePlanner

        return OfflinePlanner(clock) if clock is not None else OfflinePlanner()
    if name == "openai":
        import os

        from .openai_compat import ENV_BASE_URL, ENV_MODEL, OpenAICompatPlanner
        from .profiles import ENV_PROFILE

        env = dict(os.environ if env is None else env)
        for key, var in (("base_url", ENV_BASE_URL), ("model", ENV_MODEL), ("profile", ENV_PROFILE)):
            if overrides.get(key):
                env[var] = str(overrides.pop(key))
            overrides.pop(key, None)
        planner = OpenAICompatPlanner.from_env(env, **overrides)
        if fallback == "offline":
            from .fallback import FallbackPlanner
            from .offline import OfflinePlanner

            return FallbackPlanner(planner, OfflinePlanner(clock) if clock is not None else OfflinePlanner())
        if fallback not in (None, "none"):
            raise ValueError(f"unknown fallback '{fallback}' (offline)")
        return planner
    raise ValueError(f"unknown planner '{name}' ({', '.join(get_args(PlannerName))})")
