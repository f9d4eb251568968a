"""Placeholder: filled in by the runtime/SDK work."""

from __future__ import annotations

__all__: list[str] = []
