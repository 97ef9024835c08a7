"""A separate process holding its own Store, driven by JSON lines on stdin (one reply per line).

Used by test_concurrency.py to show two server-like processes sharing one database. It waits for
a first line ("go") before opening the store, so several workers can race the migrations.
"""

from __future__ import annotations

import json
import sys
import traceback

from ummaya.runtime.store import RetentionPolicy, Trace, open_store

NOTICE = dict(purpose="테스트", data_items=["현재 위치"], retention="세션 종료 시 삭제",
              refusal="거부할 수 있습니다")


def main() -> None:
    url = sys.argv[1]
    sys.stdin.readline()  # barrier
    store = open_store(url, migrate=False, policy=RetentionPolicy())
    reply({"applied": store.migrate()})
    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd["op"]
        try:
            if op == "grant":
                r = store.grant_consent(cmd["session"], cmd["adapter"], **NOTICE)
                reply({"consent_id": r.consent_id})
            elif op == "grant_many":
                for i in range(cmd["n"]):
                    store.grant_consent(f"{cmd['prefix']}-{i}", "a", **NOTICE)
                reply({"ok": True})
            elif op == "revoke":
                reply({"revoked": len(store.revoke_consent(session_id=cmd["session"],
                                                           adapter_id=cmd["adapter"]))})
            elif op == "has":
                reply({"has": store.has_consent(cmd["session"], cmd["adapter"])})
            elif op == "put_trace":
                t = store.put_trace(Trace(request_text=cmd["text"], release_id=cmd.get("release")))
                reply({"trace_id": t.trace_id})
            elif op == "get_trace":
                t = store.get_trace(cmd["trace_id"])
                reply({"trace": t.to_dict() if t else None})
            elif op == "list_traces":
                reply({"trace_ids": [t.trace_id for t in store.list_traces(limit=100)]})
            elif op == "verify":
                reply(store.verify().to_dict())
            elif op == "quit":
                break
            else:
                reply({"error": f"unknown op {op}"})
        except Exception:
            reply({"error": traceback.format_exc()})
    store.close()


def reply(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
