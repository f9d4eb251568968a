"""Verification: replay a grade (from the artifact store) or a proof (from itself) and
name the first mismatch.

Verification trusts nothing it is shown. A grade's record and pentads are loaded by
root (the store refuses to serve a row whose bytes do not hash to its root); a proof
carries them. Every pentad is replayed on a fresh engine over the scenario, every frame
root, the head, the blotter and the grade are recomputed and compared with what was
presented, in a fixed order, reporting the first field that differs.

A grade is verified in :mod:`.grades`, a proof in :mod:`.proofs` (the scenario it
replays on: :mod:`.scenario`); :mod:`.mismatch` names what differs.
"""

from __future__ import annotations

from .grades import NOT_STORED, verify_grade
from .mismatch import flatten
from .proofs import refused, verify_proof
from .scenario import PublishedTape, proof_scenario

__all__ = [
    "NOT_STORED",
    "PublishedTape",
    "flatten",
    "proof_scenario",
    "refused",
    "verify_grade",
    "verify_proof",
]
