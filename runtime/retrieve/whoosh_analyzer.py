"""The analyzer stored in the Whoosh schema (pickled into the index's table of contents).

Analysis itself happens in :mod:`.analysis` (grams at index time, Kiwi morphemes at build time);
Whoosh receives space-joined terms, so the index of record holds exactly the terms the query side
produces and nothing model-backed is pickled.
"""

from __future__ import annotations

from whoosh.analysis import Token, Tokenizer




class PretokenizedTokenizer(Tokenizer):
    """Splits on single spaces: the field value is already a space-joined term list.

    Keeping analysis outside Whoosh means the index of record holds exactly the terms the query
    side produces, and nothing model-backed is pickled into the index's schema.
    """

    def __call__(self, value, positions=False, chars=False, keeporiginal=False, removestops=True,
                 start_pos=0, start_char=0, tokenize=True, mode="", **kwargs):
        t = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        for pos, text in enumerate(value.split(" ")):
            if not text:
                continue
            t.text = text
            t.boost = 1.0
            t.stopped = False
            if keeporiginal:
                t.original = text
            if positions:
                t.pos = start_pos + pos
            yield t

    def __eq__(self, other):
        return type(other) is type(self)
