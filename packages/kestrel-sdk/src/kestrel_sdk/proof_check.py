"""A proof checked as ``kestrel verify`` checks it, with what the check found as values.

:func:`check_proof` replays the proof over the catalog it is given (or the scenario the
proof embeds) and, under trusted keys, checks its door's signed statement once: the
:class:`ProofCheck` it returns carries the report every face prints (``kestrel verify``'s
lines and ``--json``), the :class:`~.attested.Attested` the statement held as (who signed,
whom it names, its trial's number) and what became of a forward tape fetched from its
door (:class:`~.published_tape.Fetched`: its bars, or why they could not be fetched).
The board, ``kestrel verify --trust`` and the SDK read these values; none re-parses the
report's text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kestrel_protocol import AttestedTrial, KestrelError, Mismatch, VerificationReport

from .attested import Attested, NotAttested

if TYPE_CHECKING:
    from .published_tape import Fetched, PublishedTapes
    from .runtime.catalog import CatalogIndex

__all__ = ["ProofCheck", "check_proof"]


@dataclass(frozen=True, slots=True)
class ProofCheck:
    """A proof's verification: ``report`` (``ok``, or the first mismatch), ``attested``
    (the door's signed statement as it held under the trusted keys; ``None``: not
    checked, or it did not hold) and ``fetched`` (a forward tape fetched from the door
    that statement names: its bars, or why they could not be fetched; ``None``: none to
    fetch)."""

    report: VerificationReport
    attested: Attested | None = None
    fetched: Fetched | None = None

    @property
    def unconfirmed(self) -> str:
        """What the result adds about a forward tape that could not be fetched
        (``"; forward tape unconfirmed: …"``), or ``""``."""
        return self.fetched.note() if self.fetched is not None else ""


def check_proof(
    data: Any,
    catalog: CatalogIndex,
    *,
    require_catalog: bool = False,
    trusted_keys: Mapping[str, Any] | None = None,
    tapes: PublishedTapes | None = None,
) -> ProofCheck:
    """``data`` verified over ``catalog`` (this machine's catalog, or the scenario the
    proof embeds); under ``require_catalog`` an embedded scenario unknown here is a
    mismatch; with ``trusted_keys`` (a JWKS) the door's signed statement is checked
    against the replayed proof, and a forward proof that embeds no tape is replayed over
    the tape its door publishes (fetched through ``tapes``: once per tape however many
    proofs need it; ``None``: fetched for this proof alone).

    Raises ``ValueError`` for data that is not a ``kestrel.proof``, and ``KestrelError``
    (``UNKNOWN_SCENARIO``) for a scenario neither in the catalog nor embedded, or a
    forward session past the tape held here (saying why none was fetched)."""
    from .published_tape import fetch_published  # noqa: PLC0415 - httpx loads only here
    from .runtime.verify import refused, verify_proof  # noqa: PLC0415 - the engine too
    from .trust import check_attestation  # noqa: PLC0415 - the cryptography loads only here

    fetched = fetch_published(data, trusted_keys, tapes) if trusted_keys is not None else None
    if fetched is not None and fetched.mismatch is not None:
        return ProofCheck(refused(data, fetched.mismatch), fetched=fetched)
    try:
        report = verify_proof(catalog, data, fetched.tape if fetched is not None else None)
    except KestrelError as exc:
        if fetched is None or fetched.unconfirmed is None:
            raise
        raise KestrelError(exc.code, exc.message + fetched.note(), exc.detail) from None
    if not report.ok:
        return ProofCheck(report, fetched=fetched)
    provenance = report.provenance
    if require_catalog and provenance is not None and provenance.source != "catalog":
        mismatch = Mismatch(
            field="scenario",
            expected="a scenario of this machine's catalog (--require-catalog)",
            found=provenance.detail,
        )
        return ProofCheck(report.model_copy(update={"ok": False, "mismatch": mismatch}))
    if trusted_keys is None:
        if isinstance(data, dict) and "attestation" in data:  # signed, but not checked
            return ProofCheck(report.model_copy(update={"attestation": "unchecked"}))
        return ProofCheck(report)
    try:
        attested = check_attestation(data, trusted_keys)
    except NotAttested as exc:
        mismatch = Mismatch(field=exc.field, expected=exc.expected, found=exc.found)
        report = report.model_copy(update={"ok": False, "mismatch": mismatch})
        return ProofCheck(report, fetched=fetched)
    note = fetched.note() if fetched is not None else ""
    update: dict[str, Any] = {"attested_by": str(attested) + note}
    if attested.trial_of is not None:  # else no member at all, as before
        update["trial"] = AttestedTrial(
            of=attested.trial_of, number=attested.trial_number, minted=attested.trials_minted
        )
    said = report.model_copy(update=update)
    return ProofCheck(said, attested, fetched)
