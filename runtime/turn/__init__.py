"""The turn engine, one module per stage (see engine.py for the sequence, values.py for what the
stages pass each other). ``TurnEngine``, ``TurnRequest`` and ``TurnResult`` are imported from here."""

from .answer import chunks as _chunks
from .context import retrieval_view
from .engine import TurnEngine
from .values import Stop, TraceOrigin, TurnContext, TurnRequest, TurnResult

__all__ = ["TurnEngine", "TurnRequest", "TurnResult", "TraceOrigin", "TurnContext", "Stop", "retrieval_view", "_chunks"]
