"""The store fixtures of the store suites (every adapter) for the forward-tape tests."""

from __future__ import annotations

from tests.store.conftest import runtime_store_url, store_url

__all__ = ["runtime_store_url", "store_url"]
