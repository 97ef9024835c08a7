"""What the operator of a command line needs to know, on stderr — never in the citizen's answer.

The answer speaks to the citizen (in their words, on every surface); keys, modes, planners and
flags are the operator's, so ``ask`` and ``chat`` print these notes to stderr after the answer.
"""

from __future__ import annotations

from typing import Any

import click


def operator_notes(catalog: Any, calls: list[dict[str, Any]], stop_reason: str, *, mode: str,
                   error: dict[str, Any] | None = None, consent_adapter: str | None = None) -> list[str]:
    notes: list[str] = []
    mocked = [c["adapter_id"] for c in calls
              if c.get("tier") == "mock" and c["adapter_id"] in catalog.adapters
              and catalog.adapters[c["adapter_id"]].tier == "live"]
    if mocked and mode == "auto":
        creds = sorted({v for a in dict.fromkeys(mocked) for v in catalog.adapters[a].credentials})
        notes.append(f"note: {', '.join(dict.fromkeys(mocked))} answered from recorded fixtures (Mock); for live data "
                     f"set {', '.join(creds) or 'the upstream keys'} and run with --mode live (README: Live mode and models).")
    if stop_reason == "credential_missing":
        creds = sorted({v for c in calls if c["adapter_id"] in catalog.adapters for v in catalog.adapters[c["adapter_id"]].credentials})
        notes.append(f"note: live access needs {', '.join(creds) or 'an upstream key'} in the environment; "
                     "--mode mock answers from the recorded fixtures instead.")
    if stop_reason == "consent_required":
        aid = consent_adapter or next((c["adapter_id"] for c in reversed(calls) if c.get("status") == "consent_required"), None)
        if aid:
            notes.append(f"note: to consent from the command line, run the request again with --consent {aid} "
                         "(add --session NAME to keep it), or use `ummaya chat`.")
    if stop_reason == "permission_denied" and any(c.get("status") == "permission_denied" for c in calls):
        notes.append("note: a lookup_only session never goes on into a protected step; --policy default lifts it.")
    code = (error or {}).get("code", "")
    if code.startswith("provider_"):
        notes.append(f"note: the model server failed ({code}); --planner offline answers without one (docs/providers.md).")
    return notes


def echo_notes(notes: list[str]) -> None:
    for n in notes:
        click.secho(n, err=True, dim=True)
