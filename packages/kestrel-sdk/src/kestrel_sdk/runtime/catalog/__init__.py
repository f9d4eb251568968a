"""Runtime part (being built)."""

from __future__ import annotations

__all__: list[str] = []
