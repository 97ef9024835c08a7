"""A build worker in a fresh interpreter: ``python -m ummaya.codegen.worker [--warm MODULE:FN]``.

The build overlaps its two slow emitters (the index with Kiwi, the models with
datamodel-code-generator) with loading and linking. It used to fork for that, and a fork of a
process whose Kiwi threads were running (a server, a test session, a REPL) waits forever on locks
those threads held in a child where they no longer exist. A new interpreter started with
``subprocess`` (fork + immediate exec, or posix_spawn) has no such state, and unlike
``multiprocessing``'s spawn it never re-imports the caller's ``__main__``.

Protocol, all through temp files so neither side blocks on a pipe buffer while the other is busy:
the parent writes a pickled ``(function, args)`` to a job file and sends that file's path as one
line on stdin; the worker runs it and writes a pickled ``("ok", value)`` or ``("error", text)`` to
``<job>.out``, then exits. ``--warm`` runs a function first (loading Kiwi while the parent is still
reading YAML). The pickles only ever travel between this build and the worker it started.
"""

from __future__ import annotations

import importlib
import pickle
import sys
import traceback


def _call(spec: str) -> None:
    module, _, name = spec.partition(":")
    getattr(importlib.import_module(module), name)()


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--warm":
        try:
            _call(argv[1])
        except Exception:  # only a head start; the job loads what it needs itself
            pass
    job = sys.stdin.readline().strip()
    if not job:  # the parent cancelled before submitting
        return 0
    try:
        with open(job, "rb") as fh:
            fn, args = pickle.load(fh)
        outcome = ("ok", fn(*args))
    except BaseException:
        outcome = ("error", traceback.format_exc())
    with open(job + ".out", "wb") as fh:
        pickle.dump(outcome, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
