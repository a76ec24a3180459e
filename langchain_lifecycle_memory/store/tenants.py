"""The one user id ↔ namespace label codec, used by every entry point.

``%``, ``.`` and NUL are percent-escaped; everything else (``*`` included) is kept, since labels
are compared literally. The codec is reversible and injective; "all users" is :func:`all_users_prefix`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

__all__ = [
    "DEFAULT_NAMESPACE",
    "USER_SLOT",
    "all_users_prefix",
    "label_user",
    "namespace_for",
    "user_from_namespace",
    "user_label",
]

DEFAULT_NAMESPACE = ("memories", "{user_id}")
USER_SLOT = "{user_id}"
_ESCAPES = {"%": "%25", ".": "%2E", "\x00": "%00"}
_ESCAPE = re.compile("[%.\x00]")
_UNESCAPE = re.compile("%(25|2E|00)")
_UNESCAPED = {v[1:]: k for k, v in _ESCAPES.items()}


def user_label(user_id: Any) -> str:
    """A user id (a string, or an int) as one namespace label.

    Example:
        >>> user_label("alice.b"), user_label("50%"), user_label("*")
        ('alice%2Eb', '50%25', '*')
    """
    if user_id is None or (isinstance(user_id, str) and not user_id.strip()):
        msg = "A user id is required: pass user_id=..., or config={'configurable': {'user_id': ...}}."
        raise ValueError(msg)
    if not isinstance(user_id, (str, int)) or isinstance(user_id, bool):
        msg = f"user_id must be a string (or int), got {type(user_id).__name__}."
        raise TypeError(msg)
    text = str(user_id)
    bad = next((c for c in text if unicodedata.category(c) == "Cs"), None)
    if bad is not None:
        msg = f"user_id contains a lone surrogate (U+{ord(bad):04X}), which is not valid Unicode text."
        raise ValueError(msg)
    return _ESCAPE.sub(lambda m: _ESCAPES[m.group(0)], text)


def label_user(label: str) -> str:
    """The user id of a label (the inverse of :func:`user_label`).

    Example:
        >>> label_user("alice%2Eb"), label_user("50%25"), label_user("%252E")
        ('alice.b', '50%', '%2E')
    """
    return _UNESCAPE.sub(lambda m: _UNESCAPED[m.group(1).upper()], label)


def _slot(template: Sequence[str]) -> int:
    for i, part in enumerate(template):
        if USER_SLOT in part:
            return i
    msg = f"The namespace template {tuple(template)!r} has no '{USER_SLOT}' label."
    raise ValueError(msg)


def namespace_for(user_id: Any, template: Sequence[str] = DEFAULT_NAMESPACE) -> tuple[str, ...]:
    """Fill a namespace template such as ``("memories", "{user_id}")`` with the user's label.

    Example:
        >>> namespace_for("alice.b")
        ('memories', 'alice%2Eb')
    """
    label = user_label(user_id)
    return tuple(part.replace(USER_SLOT, label) for part in template)


def user_from_namespace(namespace: Sequence[str], template: Sequence[str] = DEFAULT_NAMESPACE) -> str | None:
    """The user id a namespace belongs to under ``template``, or ``None`` if it is not a user's namespace.

    Example:
        >>> user_from_namespace(("memories", "alice%2Eb"))
        'alice.b'
    """
    template = tuple(template)
    if len(namespace) != len(template):
        return None
    i = _slot(template)
    before, _, after = template[i].partition(USER_SLOT)
    part = namespace[i]
    fixed = all(n == t for j, (n, t) in enumerate(zip(namespace, template)) if j != i)
    if not fixed or not part.startswith(before) or not part.endswith(after) or len(part) <= len(before + after):
        return None
    return label_user(part[len(before) : len(part) - len(after)])


def all_users_prefix(template: Sequence[str] = DEFAULT_NAMESPACE) -> tuple[str, ...]:
    """The namespace prefix that holds every user (the labels before ``{user_id}``): the operator's "all users".

    Example:
        >>> all_users_prefix()
        ('memories',)
    """
    return tuple(template)[: _slot(template)]
