"""Cost of the keyed consent ledger: append, full verification, and a gate check (has_consent),
which verifies the whole ledger before a grant counts.

    python bench/ledger.py [--records 1000] [--db URL]      # default: a temporary SQLite file

Runs in a temporary UMMAYA_HOME (its own key and head folder). On PostgreSQL give a URL whose
search_path names an empty schema.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1000)
    ap.add_argument("--db", default=None)
    args = ap.parse_args()
    home = tempfile.mkdtemp(prefix="ummaya-bench-ledger-")
    os.environ["UMMAYA_HOME"] = home
    from ummaya.runtime.store import open_store

    notice = dict(purpose="p", data_items=["x"], retention="r", refusal="f")
    store = open_store(args.db or f"sqlite:///{home}/ledger.sqlite3")
    try:
        t = time.perf_counter()
        for i in range(args.records):
            store.grant_consent(f"s{i}", "a", **notice)
        append = (time.perf_counter() - t) / args.records
        t = time.perf_counter()
        for _ in range(5):
            assert store.verify().ok
        verify = (time.perf_counter() - t) / 5
        t = time.perf_counter()
        for _ in range(20):
            assert store.has_consent("s1", "a")
        gate = (time.perf_counter() - t) / 20
    finally:
        store.close()
    print(f"{store.dialect}: {args.records} records; append {append * 1000:.2f} ms each; "
          f"verify {verify * 1000:.1f} ms; has_consent {gate * 1000:.1f} ms")


if __name__ == "__main__":
    main()
