"""``python bench/model_profiles.py [--profiles vllm,llamacpp,…] [--context-tokens N] [--json]``

The scenario set through the engine with the OpenAI-compatible planner, once per provider profile,
against the scripted oracle model (tests/support/model_oracle.py: what the offline planner decided,
delivered in each profile's shapes — native tool calls, Ollama's whole calls, llama.cpp's text
calls, loops and empty replies, null content refused). For each profile: the pass rate, grounded
rate, stop-reason parity with the offline planner (same stop, or a stop that names the model's
failure), and the first request's measured prompt (system + tools) against the context, with how
often the budget trimmed it. Figures in bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.model_oracle import oracle_server, parity, record_offline  # noqa: E402
from ummaya.runtime.plan.openai_compat import OpenAICompatPlanner  # noqa: E402

PROFILES = ("openai", "friendli", "vllm", "llamacpp", "ollama", "generic")


def rendered(body: dict[str, Any]) -> str:
    """A request as a chat template lays it out for the server's prefix cache (Qwen's puts the
    tools in the system block): system, tools, then each message in order."""
    msgs = body.get("messages") or []
    parts = [msgs[0].get("content") or "" if msgs else "", json.dumps(body.get("tools") or [], ensure_ascii=False)]
    for m in msgs[1:]:
        parts.append(f"<|{m.get('role')}|>{m.get('content') or ''}{json.dumps(m.get('tool_calls') or '', ensure_ascii=False)}")
    return "\n".join(parts)


def prefix_reuse(turns: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """Over every step after a turn's first: how much of its prompt repeats the previous step's
    prompt from the first byte (what a prefix cache can skip), in estimated tokens."""
    from ummaya.runtime.plan.prompt_budget import text_tokens

    reused = total = 0.0
    stops: list[float] = []
    for bodies in turns:
        for prev, cur in zip(bodies, bodies[1:]):
            a, b = rendered(prev), rendered(cur)
            n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            reused += text_tokens(b[:n])
            total += text_tokens(b)
            stops.append(text_tokens(b[:n]))
    return {"steps": len(stops), "reused_share": round(reused / total, 4) if total else 0.0,
            "reuse_p50_tokens": round(statistics.median(stops)) if stops else 0}


def recorded_turns() -> list[list[dict[str, Any]]]:
    """The recorded transcripts' multi-step turns as they were sent (today's planner before this
    work), when the shared data is on this machine."""
    path = ROOT.parent.parent / "shared" / "data" / "model-transcripts" / "qwen2.5-coder-1.5b-q4km.jsonl"
    if not path.exists():
        return []
    rows = [json.loads(line)["request"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    turns: list[list[dict[str, Any]]] = []
    for r in rows:
        first_user = next((m["content"] for m in r["messages"] if m["role"] == "user"), "")
        if turns and next((m["content"] for m in turns[-1][-1]["messages"] if m["role"] == "user"), "") == first_user \
                and len(r["messages"]) > len(turns[-1][-1]["messages"]):
            turns[-1].append(r)
        else:
            turns.append([r])
    return [t for t in turns if len(t) > 1]


class Measured(OpenAICompatPlanner):
    """Keeps every first step's budget report."""

    def __init__(self, *a: Any, **kw: Any):
        super().__init__(*a, **kw)
        self.first: list[dict[str, Any]] = []

    async def plan(self, ctx: Any, on_delta: Any = None) -> Any:
        action = await super().plan(ctx, on_delta)
        if ctx.step == 0:
            self.first.append(dict(action.prompt))
        return action


def run_profile(steps: Any, offline: Any, profile: str, context_tokens: int | None) -> dict[str, Any]:
    from ummaya.runtime.assemble import build_engine
    from ummaya.runtime.catalog import Catalog
    from ummaya.runtime.dispatch import Dispatcher
    from ummaya.runtime.eval_turns import evaluate, load
    from ummaya.runtime.store import open_store

    cat = Catalog.load(ROOT / "generated")
    srv, model = oracle_server(steps, profile)
    with srv, tempfile.TemporaryDirectory(prefix="ummaya-bench-") as tmp:
        store = open_store(f"sqlite:///{Path(tmp) / 'b.sqlite3'}")
        try:
            planner = Measured(srv.base_url, None, "oracle", profile=profile, timeout_s=10, context_tokens=context_tokens)
            engine = build_engine(cat.root, catalog=cat, dispatcher=Dispatcher(cat, env={}), store=store, planner=planner)
            t0 = time.perf_counter()
            rep = asyncio.run(evaluate(engine, load(ROOT / "registry" / "scenarios"), planner=profile))
            seconds = time.perf_counter() - t0
        finally:
            store.close()
        bodies = [r.json for r in srv.chat_requests]
        requests = len(bodies)
    turns: list[list[dict[str, Any]]] = []
    for b in bodies:  # consecutive requests of one turn: the conversation only grows
        if turns and len(b["messages"]) > len(turns[-1][-1]["messages"]) and \
                b["messages"][1].get("content") == turns[-1][-1]["messages"][1].get("content"):
            turns[-1].append(b)
        else:
            turns.append([b])
    reuse = prefix_reuse(turns)
    first = planner.first
    sizes = [r["system_tokens"] + r["tools_tokens"] for r in first]
    par = parity(offline, rep)
    return {
        "profile": profile, "context_tokens": first[0]["context_tokens"] if first else None,
        "scenarios": len(rep.scenarios), "turns": len(rep.rows), "requests": requests, "seconds": round(seconds, 1),
        "pass_rate": round(rep.pass_rate, 4), "grounded_rate": round(rep.grounded_rate, 4),
        "stop_parity": par["ok_rate"], "same_stop": par["same"], "model_failure_stop": par["model_failure"],
        "different_stop": par["different"], "mismatches": par["mismatches"],
        "first_prompt_p50": statistics.median(sizes) if sizes else 0, "first_prompt_max": max(sizes, default=0),
        "first_fits": sum(r["fits"] for r in first), "first_requests": len(first),
        "first_trimmed": sum(bool(r["trimmed"]) for r in first),
        "tools_sent_p50": statistics.median(r["tools_sent"] for r in first) if first else 0,
        "oracle_misses": model.misses, "oracle_tool_not_offered": model.unoffered,
        "prefix_reused_share": reuse["reused_share"], "prefix_steps": reuse["steps"],
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profiles", default=",".join(PROFILES))
    ap.add_argument("--context-tokens", type=int, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    steps, offline, conflicts = record_offline()
    rows = [run_profile(steps, offline, p, args.context_tokens) for p in args.profiles.split(",")]
    before = prefix_reuse(recorded_turns())
    if args.json:
        print(json.dumps({"offline_pass_rate": offline.pass_rate, "recorded_steps": len(steps),
                          "conflicts": conflicts, "recorded_prefix_reuse": before, "profiles": rows},
                         ensure_ascii=False, indent=1))
        return
    print(f"offline: {len(offline.scenarios)} scenarios, {len(offline.rows)} turns, pass {offline.pass_rate:.1%}; "
          f"{len(steps)} recorded steps, {conflicts} conflicts")
    if before["steps"]:
        print(f"recorded transcripts (the planner before): prefix reused {before['reused_share']:.1%} of later steps' "
              f"prompts over {before['steps']} steps (p50 {before['reuse_p50_tokens']} tokens)")
    print("profile    ctx     stop parity  same  fail  diff  pass    grounded  prompt p50/max  fits   trimmed  tools  prefix  s")
    for r in rows:
        print(f"{r['profile']:10} {r['context_tokens']!s:7} {r['stop_parity']:6.1%}       {r['same_stop']:4}  "
              f"{r['model_failure_stop']:4}  {r['different_stop']:4}  {r['pass_rate']:6.1%}  {r['grounded_rate']:6.1%}    "
              f"{r['first_prompt_p50']:>6}/{r['first_prompt_max']:<6}  {r['first_fits']}/{r['first_requests']}  "
              f"{r['first_trimmed']:7}  {r['tools_sent_p50']:5}  {r['prefix_reused_share']:6.1%}  {r['seconds']}")
        for m in r["mismatches"][:5]:
            print(f"    {m}")


if __name__ == "__main__":
    main()
