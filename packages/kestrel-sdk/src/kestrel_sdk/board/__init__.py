"""The board: many proofs verified, badged and ranked on one self-contained page."""

from __future__ import annotations

from kestrel_protocol.documents import MAX_DEPTH, MAX_FILE_BYTES

from .baseline import BASELINE, SEALED_ON_DOOR, Baseline, buy_and_hold
from .build import METHOD, Board, build_board
from .catalog import BoardCatalog
from .forward import ForwardWindow, forward_window
from .gaps import GAP_METHOD, AgentGap, Gaps, PairGap, Twins, memorisation_gaps
from .html import render_board
from .published import (
    PUBLISHED_KIND,
    PUBLISHED_PATH,
    PublishedBoard,
    published_board,
    published_document,
    published_seals,
)
from .rank import AgentStanding, Cell, ScenarioRanking, rank_board
from .rows import BADGES, METRICS, Badge, BoardRow, check_entry
from .sources import INSPECT_METADATA_KEY, Entry, NoProofs, read_entries
from .stats import Interval, interval
from .trials import TrialsShown, trials_shown
from .window import WHOLE_WINDOW

__all__ = [
    "BADGES",
    "BASELINE",
    "GAP_METHOD",
    "INSPECT_METADATA_KEY",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "METHOD",
    "METRICS",
    "PUBLISHED_KIND",
    "PUBLISHED_PATH",
    "SEALED_ON_DOOR",
    "WHOLE_WINDOW",
    "AgentGap",
    "AgentStanding",
    "Badge",
    "Baseline",
    "Board",
    "BoardCatalog",
    "BoardRow",
    "Cell",
    "Entry",
    "ForwardWindow",
    "Gaps",
    "Interval",
    "NoProofs",
    "PairGap",
    "PublishedBoard",
    "ScenarioRanking",
    "TrialsShown",
    "Twins",
    "build_board",
    "buy_and_hold",
    "check_entry",
    "forward_window",
    "interval",
    "memorisation_gaps",
    "published_board",
    "published_document",
    "published_seals",
    "rank_board",
    "read_entries",
    "render_board",
    "trials_shown",
]
