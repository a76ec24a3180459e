"""Pause Python's cyclic garbage collector while a namespace is read or indexed in bulk.

Reading a 50k-record namespace allocates a few million objects that all stay alive
(the records, their documents, the index). The collector's generation scans walk the
whole growing heap again and again for nothing: measured at 50k records, a full read
took 1.73 s with it running and 0.65 s paused, building the snapshot 1.18 s and 0.85 s.
Reference counting still frees everything as usual; only the cycle scans wait, and the
block's objects then join the oldest generation (a later full collection sees them).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["PROMOTE_AFTER", "paused_gc"]

PROMOTE_AFTER = 10_000
"""Objects a block must leave in the youngest generation to have them promoted at once.

At 100,000 a 50k-record snapshot build (which leaves fewer) was followed by a collection of
what it left at the block's end, inside the search (a fresh worker's first search at 50k
attributes: ~30 ms, ``benchmarks/first_search_stages.py``; a full one when due)."""
_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Run the block with the cyclic collector off (nested and concurrent blocks: off until the last ends).

    It is switched back on only if it was on when the first block began.
    """
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                if gc.get_count()[0] > PROMOTE_AFTER:
                    # The block's objects would all sit in the youngest generation and the next
                    # allocation would scan every one of them (0.2-0.3 s after a 50k read). They
                    # are long-lived, so move them straight to the oldest generation: freezing and
                    # unfreezing does that without a scan (a later full collection still sees
                    # them). A small block leaves its few objects to the usual young collection.
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()
