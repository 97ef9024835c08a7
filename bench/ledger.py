"""The consent ledger at 100 / 1,000 / 10,000 / 100,000 records (issue 19 item 2).

    python bench/ledger.py [--sizes 100,1000,10000,100000] [--db URL] [--turns 20]

For each size, in a temporary UMMAYA_HOME (its own key and head folder) and a fresh database
(SQLite by default; ``--db postgresql://…`` runs each size in a schema of its own):

* **load** — the chain is written in bulk (records signed and linked exactly as appends sign them,
  one transaction, the head checkpoint moved once): 100,000 appends one by one would measure
  nothing but the append (reported separately, ``append``);
* **start walk** — the full walk a process runs at start (page by page, read transactions);
* **gate** — a consent-gated turn through the whole engine (offline planner, Mock dispatch,
  ``welfare_eligibility_check`` on a recorded consent), p50 / max over ``--turns`` turns, and the
  bare gate decision (``consent_state``) p50;
* **writer wait** — another process appends consents and writes sessions the whole time the turns
  run; its slowest write is how long a writer waited (target: ≤ 100 ms);
* **tamper** — a middle row is deleted behind the chain (triggers dropped): the scheduled walk
  and ``ummaya consent verify`` must both report it, and the gate must then deny.

Target: a gated turn at 100,000 records within 2× of the same turn at 100 records.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NOTICE = dict(purpose="복지 자격 확인", data_items=["이름", "생년월일"], retention="1년", refusal="거부 가능")
ADAPTER = "welfare_eligibility_check"
QUERY = "홍길동 1990-01-01 기초연금 받을 수 있는지 확인해줘"


def bulk_load(store, n: int) -> None:
    """``n`` grants (every 10th revoked), signed and linked as ``_append_consent`` would."""
    import secrets as _s

    from ummaya.runtime.store.migrations import CONSENT_CHAIN_LOCK_KEY
    from ummaya.runtime.store.records import GENESIS_HASH, ConsentRecord, utcnow

    keys = store.ledger_keys()
    rows, prev, now = [], GENESIS_HASH, utcnow()
    granted: list[ConsentRecord] = []
    while len(rows) < n:
        i = len(rows)
        if i % 10 == 9 and granted:
            g = granted.pop()
            rec = ConsentRecord(consent_id=g.consent_id, session_id=g.session_id, adapter_id=g.adapter_id,
                                purpose=g.purpose, data_items=g.data_items, retention=g.retention,
                                refusal=g.refusal, granted_at=now, action="revoke", prev_hash=prev)
        else:
            rec = ConsentRecord(consent_id=_s.token_hex(16), session_id=f"bulk-{i}", adapter_id=ADAPTER,
                                granted_at=now, action="grant", prev_hash=prev, **NOTICE)
            granted.append(rec)
        rec.key_id = keys.current_id
        rec.hash = rec.compute_hash(keys.current)
        prev = rec.hash
        rows.append(rec)
    with store.tx() as tx:
        store._advisory_lock(tx, CONSENT_CHAIN_LOCK_KEY)
        lid = store._ledger_id(tx, create=True)
        tx.many("INSERT INTO consents (consent_id, session_id, adapter_id, purpose, data_items, retention, "
                "refusal, granted_at, action, prev_hash, hash, key_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(r.consent_id, r.session_id, r.adapter_id, r.purpose, store._json_in(list(r.data_items)),
                  r.retention, r.refusal, store._ts_in(r.granted_at), r.action, r.prev_hash, r.hash, r.key_id)
                 for r in rows])
        last = tx.q("SELECT seq, hash FROM consents ORDER BY seq DESC LIMIT 1")[0]
        store.ledger_heads().write(keys, lid, last["seq"], last["hash"])
    if store.dialect == "postgresql":  # what autovacuum would have done for a ledger grown row by row
        with store.tx() as tx:
            tx.q("ANALYZE consents")


def writer(url: str, stop_file: str, out_file: str) -> None:
    """Another process writing the whole time: appends and session writes; the slowest wait."""
    from ummaya.runtime.store import open_store
    from ummaya.runtime.store.records import Session

    store = open_store(url)
    waits: list[float] = []
    i = 0
    while not os.path.exists(stop_file):
        t = time.perf_counter()
        if i % 4 == 0:
            store.grant_consent(f"writer-{i}", "other_adapter", **NOTICE)
        else:
            store.put_session(Session(f"writer-{i % 50}", {"n": i}, i))
        waits.append(time.perf_counter() - t)
        i += 1
        time.sleep(0.005)
    store.close()
    Path(out_file).write_text(json.dumps({"writes": len(waits), "max_ms": max(waits) * 1000 if waits else 0,
                                          "p99_ms": (sorted(waits)[int(len(waits) * 0.99)] * 1000) if waits else 0}))


def pg_schema_url(base: str, schema: str) -> str:
    import psycopg

    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options=-csearch_path%3D{schema}"


def engine_for(store):
    from ummaya.runtime.assemble import build_engine
    from ummaya.runtime.catalog import Catalog
    from ummaya.runtime.dispatch import Dispatcher

    catalog = Catalog.load(REPO / "generated")
    return build_engine(REPO / "generated", planner="offline", store=store, catalog=catalog,
                        dispatcher=Dispatcher(catalog, env={}))


def run_size(n: int, db: str | None, turns: int) -> dict:
    home = tempfile.mkdtemp(prefix=f"ummaya-bench-ledger-{n}-")
    os.environ["UMMAYA_HOME"] = home
    os.environ.pop("UMMAYA_LEDGER_KEY", None)
    from ummaya.runtime.store import open_store
    from ummaya.runtime.turn import TurnRequest

    url = pg_schema_url(db, f"bench_ledger_{n}") if db else f"sqlite:///{home}/ledger.sqlite3"
    store = open_store(url)
    out: dict = {"records": n, "dialect": store.dialect}
    t = time.perf_counter()
    bulk_load(store, max(0, n - 1))
    out["load_s"] = time.perf_counter() - t
    t = time.perf_counter()
    for i in range(20):
        store.grant_consent(f"append-{i}", "other_adapter", **NOTICE)
    out["append_ms"] = (time.perf_counter() - t) / 20 * 1000
    store.close()

    store = open_store(url)  # a fresh process's view: nothing verified yet
    t = time.perf_counter()
    assert store.walk_ledger().ok
    out["start_walk_s"] = time.perf_counter() - t
    engine = engine_for(store)
    sid = "bench-citizen"
    store.grant_consent(sid, ADAPTER, **NOTICE)

    stop, result = os.path.join(home, "stop"), os.path.join(home, "writer.json")
    proc = subprocess.Popen([sys.executable, __file__, "--writer", url, stop, result],
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    time.sleep(1.0)  # the writer is up and writing

    async def turns_() -> list[float]:
        times = []
        for _ in range(turns):
            t0 = time.perf_counter()
            r = await engine.ask(TurnRequest(QUERY, session_id=sid, mode="mock"))
            times.append(time.perf_counter() - t0)
            assert r.stop_reason == "completed", (r.stop_reason, r.answer)
        return times

    asyncio.run(turns_())  # warm-up (imports, Kiwi-free caches)
    times = asyncio.run(turns_())
    gate = []
    for _ in range(50):
        t0 = time.perf_counter()
        assert store.consent_state(sid, ADAPTER) == "granted"
        gate.append(time.perf_counter() - t0)
    Path(stop).write_text("")
    proc.wait(60)
    w = json.loads(Path(result).read_text())
    out.update(turn_p50_ms=statistics.median(times) * 1000, turn_max_ms=max(times) * 1000,
               gate_p50_ms=statistics.median(gate) * 1000, writer_max_ms=w["max_ms"],
               writer_p99_ms=w["p99_ms"], writes=w["writes"])

    # Tamper: delete a middle row behind the chain; the scheduled walk and `consent verify` see it.
    middle = max(1, n // 2)
    with store.tx() as tx:
        if store.dialect == "postgresql":
            tx.q("ALTER TABLE consents DISABLE TRIGGER USER")
        else:
            tx.q("DROP TRIGGER IF EXISTS consents_no_delete")
        tx.q("DELETE FROM consents WHERE seq = ?", (middle,))
    t = time.perf_counter()
    report = store.walk_ledger()
    out["tamper_walk_s"] = time.perf_counter() - t
    out["walk_detects"] = (not report.ok) and report.broken_seq is not None
    out["gate_after_tamper"] = store.consent_state(sid, ADAPTER)
    cli = subprocess.run([str(Path(sys.executable).parent / "ummaya"), "consent", "verify", "--db", url],
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    out["verify_exit"] = cli.returncode
    store.close()
    return out


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--writer":
        return writer(*sys.argv[2:])
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100,1000,10000,100000")
    ap.add_argument("--db", default=None, help="postgresql://… (each size gets its own schema)")
    ap.add_argument("--turns", type=int, default=20)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        r = run_size(n, args.db, args.turns)
        rows.append(r)
        print(f"{r['dialect']} {n:>7} records: load {r['load_s']:.1f} s; append {r['append_ms']:.2f} ms; "
              f"start walk {r['start_walk_s'] * 1000:.0f} ms; gated turn p50 {r['turn_p50_ms']:.1f} ms "
              f"(max {r['turn_max_ms']:.1f}); gate decision p50 {r['gate_p50_ms']:.2f} ms; "
              f"writer max wait {r['writer_max_ms']:.1f} ms (p99 {r['writer_p99_ms']:.1f}, {r['writes']} writes); "
              f"middle-row deletion: walk {'detects' if r['walk_detects'] else 'MISSES'} it "
              f"({r['tamper_walk_s'] * 1000:.0f} ms), gate {r['gate_after_tamper']}, "
              f"consent verify exit {r['verify_exit']}", flush=True)
    base = rows[0]["turn_p50_ms"]
    for r in rows:
        print(f"  {r['records']:>7}: gated turn {r['turn_p50_ms'] / base:.2f}× the {rows[0]['records']}-record turn")
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


if __name__ == "__main__":
    main()
