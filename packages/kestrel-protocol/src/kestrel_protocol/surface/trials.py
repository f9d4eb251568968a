"""Trial principals: where a door mints them and how they are named.

An evaluator's harness gives each run of an agent (an Inspect sample in one epoch) a
principal of its own, ``PARENT/trial-NAME``, so that runs do not share a horizon; a door
mints it at :data:`TRIALS_PATH` for a token holding ``kestrel:trials`` and says to
anyone at :data:`TRIALS_MINTED_PATH` how many a parent has minted, and
``kestrel-mcp --principal`` names it locally (``local/trial-NAME``).
"""

from __future__ import annotations

from typing import Final

__all__ = ["TRIALS_MINTED_PATH", "TRIALS_PATH", "TRIAL_MARK", "trial_principal"]

TRIALS_PATH: Final = "/v1/trials"
"""``POST`` ``{"trial": NAME}`` mints a trial; ``DELETE …/{tokenId}`` revokes one."""
TRIALS_MINTED_PATH: Final = TRIALS_PATH + "/of/{trial_of}"
"""``GET`` (no credential): how many trials the principal whose pseudonym is ``trial_of``
(a statement's ``trialOf``) has minted, signed by the door; ``0`` for one it never knew."""
TRIAL_MARK: Final = "/trial-"
"""What joins a parent principal to its trial's name."""


def trial_principal(parent: str, name: str) -> str:
    """The principal of the trial ``name`` of ``parent``: ``PARENT/trial-NAME``."""
    return f"{parent}{TRIAL_MARK}{name}"
