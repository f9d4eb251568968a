"""Trial principals: where a door mints them and how they are named.

An evaluator's harness gives each run of an agent (an Inspect sample in one epoch) a
principal of its own, ``PARENT/trial-NAME``, so that runs do not share a horizon; a door
mints it at :data:`TRIALS_PATH` for a token holding ``kestrel:trials``, and
``kestrel-mcp --principal`` names it locally (``local/trial-NAME``).
"""

from __future__ import annotations

from typing import Final

__all__ = ["TRIALS_PATH", "TRIAL_MARK", "trial_principal"]

TRIALS_PATH: Final = "/v1/trials"
"""``POST`` ``{"trial": NAME}`` mints a trial; ``DELETE …/{tokenId}`` revokes one."""
TRIAL_MARK: Final = "/trial-"
"""What joins a parent principal to its trial's name."""


def trial_principal(parent: str, name: str) -> str:
    """The principal of the trial ``name`` of ``parent``: ``PARENT/trial-NAME``."""
    return f"{parent}{TRIAL_MARK}{name}"
