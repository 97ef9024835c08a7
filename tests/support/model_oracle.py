"""A scripted model that plays the whole scenario set, in each provider profile's shapes.

``ummaya eval turns --planner openai`` needs a model for every scenario. This one knows what to
do because the embedded offline planner decided it first: ``record_offline`` runs the scenario set
through an offline engine and keeps, for every step, what the offline planner proposed, keyed by
what a model would see — the citizen's message with its session ``<data>`` block (the same text
the OpenAI-compatible planner builds) and the step number. ``OracleModel`` then answers each
chat request from that record, *written the way the profile's server delivers it*:

- ``openai``, ``friendli``, ``vllm``, ``generic``: native ``tool_calls`` fragments, usage at the end;
- ``ollama``: every call whole in one chunk without ``index`` (Ollama's shape);
- ``llamacpp``: no server parser — calls as text, rotating through ```` ```json ```` fences, bare
  JSON (double-encoded arguments, as the recorded Qwen models sent them), ``<tool_call>`` tags,
  ``<function=…>`` and ``[TOOL_CALLS]``; no usage; and instead of answering, what the recorded
  small models did after their last call: the same call again, or an empty ``"\\n"`` reply.

A question the offline planner asked goes out as an ``ask_citizen`` call naming its tool. The
server's habits (``Quirks``) are the profile's: llama.cpp's 500 on ``"content": null``.

Run by hand (prints ``UMMAYA_LLM_BASE_URL=…``; then ``ummaya eval turns --planner openai
--base-url … --profile llamacpp``)::

    python -m tests.support.model_oracle --profile llamacpp
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.fake_openai import (
    FakeOpenAIServer,
    Quirks,
    RecordedRequest,
    SSE,
    ollama_tool_calls,
    stream_text,
    stream_tool_calls,
    text_call,
)

REPO = Path(__file__).resolve().parents[2]
PROSE = {"ko": "조회한 결과를 정리했어요. 자세한 내용은 아래를 확인해 주세요.",
         "en": "Here is what the lookup found; the details are below."}
_CLOCK = re.compile(r"\n?<data source=\"clock\">[^<]*</data>")


def request_key(first_user: str, step: int) -> str:
    """The citizen's message as the model sees it (the clock left out: it moves), and the step."""
    return f"{step}\x00{_CLOCK.sub('', first_user).rstrip()}"


@dataclass
class Step:
    kind: str  # call | ask | answer
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    text: str = ""
    missing: list[str] = field(default_factory=list)
    language: str = "ko"


class _Recorder:
    """Wraps the offline planner; keeps every step it decides under the model's view of it."""

    name = "offline"

    def __init__(self) -> None:
        from ummaya.runtime.plan.offline import OfflinePlanner
        from ummaya.runtime.plan.openai_compat import OpenAICompatPlanner

        self.offline = OfflinePlanner()
        self.view = OpenAICompatPlanner("http://127.0.0.1:9/v1", None, "oracle", profile="generic")
        self.steps: dict[str, Step] = {}
        self.conflicts = 0

    async def plan(self, ctx: Any, on_delta: Any = None) -> Any:
        action = await self.offline.plan(ctx, on_delta)
        first = self.view.build_messages(ctx)[1]["content"]
        step = Step(action.kind, [(c.adapter_id, dict(c.arguments or {})) for c in action.calls if c.adapter_id],
                    action.text, list(action.missing), ctx.language)
        key = request_key(first, ctx.step)
        if key in self.steps and self.steps[key].calls != step.calls:
            self.conflicts += 1
        self.steps.setdefault(key, step)
        return action


def record_offline(generated: Path | None = None, scenarios: Path | None = None) -> tuple[dict[str, Step], Any, int]:
    """Run the scenario set with the offline planner; the steps it took, its report, conflicts."""
    import tempfile

    from ummaya.runtime.assemble import build_engine
    from ummaya.runtime.dispatch import Dispatcher
    from ummaya.runtime.eval_turns import evaluate, load
    from ummaya.runtime.catalog import Catalog
    from ummaya.runtime.store import open_store

    rec = _Recorder()
    cat = Catalog.load(generated or REPO / "generated")
    with tempfile.TemporaryDirectory(prefix="ummaya-oracle-") as tmp:
        store = open_store(f"sqlite:///{Path(tmp) / 'oracle.sqlite3'}")
        try:
            engine = build_engine(cat.root, catalog=cat, dispatcher=Dispatcher(cat, env={}), store=store, planner=rec)
            rep = asyncio.run(evaluate(engine, load(scenarios or REPO / "registry" / "scenarios"), planner="offline"))
        finally:
            store.close()
    return rec.steps, rep, rec.conflicts


TEXT_SHAPES = ("fence", "bare", "tag", "function_tag", "mistral")


class OracleModel:
    """The ``responder`` of a FakeOpenAIServer: each request answered from the offline record."""

    def __init__(self, steps: dict[str, Step], profile: str):
        self.steps = steps
        self.profile = profile
        self._n = itertools.count()
        self._lock = threading.Lock()
        self.misses = 0
        self.unoffered = 0

    def __call__(self, req: RecordedRequest) -> Any:
        body = req.json or {}
        msgs = body.get("messages") or []
        self._usage = _prompt_usage(body)
        first = next((m.get("content") or "" for m in msgs if m.get("role") == "user"), "")
        step_no = sum(1 for m in msgs if m.get("role") == "assistant" and m.get("tool_calls"))
        with self._lock:
            n = next(self._n)
        step = self.steps.get(request_key(first, step_no))
        if step is None:
            self.misses += 1
            return stream_text("무엇을 도와드릴까요?")  # a question the engine turns into needs_input
        offered = {t.get("function", {}).get("name") for t in body.get("tools") or []}
        if step.kind == "call":
            if not all(name in offered for name, _ in step.calls):
                # The tool it needs was not sent (the budget trimmed it): a model cannot call it.
                self.unoffered += 1
                return stream_text(PROSE.get(step.language, PROSE["ko"]), usage=None)
            return self._calls(step.calls, n)
        if step.kind == "ask":
            args = {"question": step.text or _question(step), "missing": step.missing,
                    **({"tool": step.calls[0][0], "arguments": step.calls[0][1]} if step.calls else {})}
            return self._calls([("ask_citizen", args)], n)
        return self._answer(step, msgs, n)

    def _calls(self, calls: list[tuple[str, dict[str, Any]]], n: int) -> Any:
        pairs = [(name, json.dumps(args, ensure_ascii=False)) for name, args in calls]
        if self.profile == "ollama":
            return ollama_tool_calls(pairs, usage=self._usage)
        if self.profile == "llamacpp":
            shape = TEXT_SHAPES[n % len(TEXT_SHAPES)]
            if len(pairs) == 1:
                return text_call(shape, pairs[0][0], pairs[0][1], double_encoded=shape == "bare" and n % 2 == 0)
            items = [{"name": a, "arguments": json.loads(b)} for a, b in pairs]
            return stream_text("```json\n" + json.dumps(items, ensure_ascii=False) + "\n```", usage=None)
        return stream_tool_calls(pairs, usage=self._usage)

    def _answer(self, step: Step, msgs: list[dict[str, Any]], n: int) -> Any:
        if self.profile == "llamacpp":
            # What the recorded small models did instead of answering: the same call again, or "\n".
            last = next((m for m in reversed(msgs) if m.get("role") == "assistant" and m.get("tool_calls")), None)
            if last is not None and n % 3 == 0:
                fn = last["tool_calls"][0]["function"]
                return text_call("bare", fn["name"], fn["arguments"] or "{}")
            if n % 3 == 1:
                return SSE([*stream_text("\n", usage=None).events])
        return stream_text(PROSE.get(step.language, PROSE["ko"]), usage=None if self.profile == "llamacpp" else self._usage)


def _prompt_usage(body: dict[str, Any]) -> tuple[int, int]:
    """What a server would report for this prompt: here 0.9 × the planner's own estimate (a
    tokenizer a little more frugal than the estimate), so calibration has something to learn."""
    from ummaya.runtime.plan.prompt_budget import message_tokens, tools_tokens

    est = sum(message_tokens(m) for m in body.get("messages") or []) + tools_tokens(body.get("tools") or [])
    return int(est * 0.9), 30


def _question(step: Step) -> str:
    from ummaya.runtime import compose as ans

    text = ans.compose_ask(step.missing or ["request"], step.language if step.language in ("ko", "en") else "ko")
    # A model asks without the engine's worked examples (「예: 1990-01-01」): a date in a model's
    # question is a claim the check would rightly remove.
    return re.sub(r"\s*[(（](?:예|e\.g\.)[^)）]*[)）]", "", text)


PROFILE_QUIRKS = {"llamacpp": Quirks(reject_null_content=True, owned_by="llamacpp"),
                  "vllm": Quirks(owned_by="vllm", max_model_len=8192), "ollama": Quirks(owned_by="library")}


def oracle_server(steps: dict[str, Step], profile: str) -> tuple[FakeOpenAIServer, OracleModel]:
    model = OracleModel(steps, profile)
    return FakeOpenAIServer(quirks=PROFILE_QUIRKS.get(profile), responder=model), model


# What a model's failure looks like as a stop: the engine names it (refused guesses, a dead or
# useless provider); anything else must equal the offline planner's stop.
MODEL_FAILURE_STOPS = ("invalid_arguments", "channel_unavailable", "ungrounded", "budget_exhausted")


def parity(offline: Any, model: Any) -> dict[str, Any]:
    """Per turn: the model's stop equals the offline planner's, or names the model's failure."""
    same = failure = other = 0
    mismatches = []
    for a, b in zip(offline.rows, model.rows):
        if a.got == b.got:
            same += 1
        elif b.got in MODEL_FAILURE_STOPS:
            failure += 1
            mismatches.append((a.scenario, a.turn, a.got, b.got, "model failure"))
        else:
            other += 1
            mismatches.append((a.scenario, a.turn, a.got, b.got, "different"))
    n = len(offline.rows)
    return {"turns": n, "same": same, "model_failure": failure, "different": other,
            "ok_rate": round((same + failure) / n, 4) if n else 0.0, "mismatches": mismatches}


def main(argv: list[str] | None = None) -> None:
    import argparse
    import threading

    ap = argparse.ArgumentParser(description="serve the scenario oracle model in a profile's shapes")
    ap.add_argument("--profile", default="vllm", choices=["openai", "friendli", "vllm", "llamacpp", "ollama", "generic"])
    args = ap.parse_args(argv)
    steps, rep, conflicts = record_offline()
    srv, _ = oracle_server(steps, args.profile)
    with srv:
        print(f"UMMAYA_LLM_BASE_URL={srv.base_url}  ({len(steps)} recorded steps, {conflicts} conflicts)", flush=True)
        try:
            threading.Event().wait()  # nothing sets it: serve until Ctrl-C
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
