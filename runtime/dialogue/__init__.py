"""The dialogue: state carried between turns (state.py), reading a message against it
(resolve.py), and what a finished turn leaves behind (update.py)."""

from .resolve import Frame, Hints, resolve
from .state import POLICIES, DialogueState, Intent, PendingQuestion, Place, Policy
from .update import after_turn

__all__ = ["DialogueState", "Frame", "Hints", "Intent", "PendingQuestion", "Place", "Policy",
           "POLICIES", "after_turn", "resolve"]
