"""The bulk-read GC pause: off inside (nested too), restored after, never switched on by us."""

from __future__ import annotations

import gc
import threading

from langchain_lifecycle_memory.store.gcpause import paused_gc


def test_the_collector_is_off_inside_nested_and_concurrent_blocks_and_restored_after() -> None:
    assert gc.isenabled()
    inside = threading.Event()
    release = threading.Event()

    def other() -> None:
        with paused_gc():
            inside.set()
            release.wait(5)

    worker = threading.Thread(target=other)
    worker.start()
    inside.wait(5)
    with paused_gc():
        with paused_gc():
            kept = [[i] for i in range(300_000)]  # enough to be promoted when the last block ends
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert not gc.isenabled()  # the other thread's block still runs
    release.set()
    worker.join()
    assert gc.isenabled()
    assert len(kept) == 300_000 and gc.get_count()[0] < 1000  # promoted, not left to a young scan


def test_a_collector_the_caller_switched_off_stays_off() -> None:
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
