"""The board: many proofs verified, badged and ranked on one self-contained page."""

from __future__ import annotations

from .build import Board, build_board
from .files import MAX_DEPTH, MAX_FILE_BYTES
from .html import render_board
from .rank import AgentStanding, ScenarioRanking, rank_board
from .rows import BADGES, METRICS, Badge, BoardRow, check_entry
from .sources import INSPECT_METADATA_KEY, Entry, read_entries

__all__ = [
    "BADGES",
    "INSPECT_METADATA_KEY",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "METRICS",
    "AgentStanding",
    "Badge",
    "Board",
    "BoardRow",
    "Entry",
    "ScenarioRanking",
    "build_board",
    "check_entry",
    "rank_board",
    "read_entries",
    "render_board",
]
