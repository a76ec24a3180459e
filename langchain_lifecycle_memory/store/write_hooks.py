"""Listeners told of every namespace write, for derived work another stage can do ahead of a read.

The store knows records, not how they are searched, and must not import the read side
(``lint-imports``). A stage that derives something from written records (the router's
embedded topic cards, ``read._card_warmer``) registers a listener here instead; the store
calls it after each namespace write with the written ``(key, value or None)`` changes.

A listener runs in the writer's thread, so it must be cheap (queue the work, do it
elsewhere) and must not raise: an exception is logged and dropped, and the write it
follows has already succeeded.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["WriteListener", "add_write_listener", "notify_write", "remove_write_listener"]

WriteListener = Callable[[Any, tuple[str, ...], Sequence[tuple[str, Any]]], None]
"""``listener(store, namespace, changes)``; ``changes``: ``(key, value or None)`` per written item."""

_log = logging.getLogger(__name__)
_lock = threading.Lock()
_listeners: tuple[WriteListener, ...] = ()


def add_write_listener(listener: WriteListener) -> None:
    """Call ``listener`` after every namespace write of every store in this process (once per listener)."""
    global _listeners
    with _lock:
        if listener not in _listeners:
            _listeners = (*_listeners, listener)


def remove_write_listener(listener: WriteListener) -> None:
    """Stop calling ``listener`` (no-op if it was not registered)."""
    global _listeners
    with _lock:
        _listeners = tuple(x for x in _listeners if x != listener)


def notify_write(store: Any, namespace: tuple[str, ...], changes: Sequence[tuple[str, Any]]) -> None:
    """Tell every listener of a write that has been committed (errors are logged, never raised)."""
    for listener in _listeners:
        try:
            listener(store, namespace, changes)
        except Exception:  # a derived cache must never fail a write that already succeeded
            _log.warning("write listener %r failed", listener, exc_info=True)
