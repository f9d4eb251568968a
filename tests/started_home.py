"""The ``HOME`` the suite was started with (the operator's), read when ``tests/conftest.py``
imports this module, before it points ``HOME`` at a home of the suite's own: for what a
test reads there on purpose (uv's cache of the workspace's wheels), never to write."""

from __future__ import annotations

import os

__all__ = ["STARTED_HOME"]

STARTED_HOME = os.environ.get("HOME", "")
