"""Unit tests run offline: sockets are blocked except loopback (the test Chroma server)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pytest_socket import enable_socket, socket_allow_hosts


@pytest.fixture(autouse=True)
def _loopback_only() -> Iterator[None]:
    socket_allow_hosts(["127.0.0.1", "localhost", "::1"], allow_unix_socket=True)
    yield
    enable_socket()
