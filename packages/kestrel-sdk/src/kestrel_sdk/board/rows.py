"""A board's rows: one per proof, verified as ``kestrel verify`` verifies it.

A row is ``failed`` (with the reason) when the proof does not replay, when its scenario
is neither in this machine's catalog nor embedded, when it embeds a scenario that takes
a catalog scenario's id with other terms or bars (a forgery: replay alone would pass
it), when its door's signed statement does not hold under the trusted keys, when there
was no proof at all, when its grade did not pass a check, or when the session stopped
before its window ended (the board's own check, ``whole-window``: its last clock bar is
before the scenario's last bar, "stopped at bar 10 of 2519"; an agent that trades ten
bars of 2,520 would otherwise rank on a Sharpe of ten bars; under ``--trust``, a forward
session its door graded while the window was still open, :mod:`.window`). A failed row
never wears a passing badge. It is ``attested-and-sealed`` when the statement holds and
says the scenario was sealed, else ``replayed-only``.

A row is credited to the agent the run was named for (``-T agent=NAME`` of
``kestrel_trading``, kept in the Inspect sample's metadata, or the name an operator
published a door's proof under), else to the principal the statement names (its ``p_…``
pseudonym; for a trial, the pseudonym of the principal whose trial it was, ``trialOf``,
so that every run of one evaluator's agent is one cell) when a trusted statement holds,
else to the agent it was filed under (its folder, or an Inspect log's model): a proof
copied into another agent's folder still credits its principal. A name is a claim: an
attested row always carries the signed identity too (JSON ``identity``; on the page,
``NAME (signed identity p_…)``), so a proof of another principal's session filed under
an entrant's name shows whose session it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from kestrel_protocol import KestrelError

from ..forward_edge import edge_mismatch
from .catalog import BoardCatalog
from .forward import ForwardWindow, forward_window
from .sources import Entry
from .window import (
    WHOLE_WINDOW,
    open_window,
    stopped_early,
    unsigned_edge,
    window,
    window_unsaid,
)

if TYPE_CHECKING:
    from ..published_tape import PublishedTapes

__all__ = ["BADGES", "METRICS", "Badge", "BoardRow", "check_entry"]

Badge = Literal["attested-and-sealed", "replayed-only", "failed"]
BADGES: tuple[Badge, ...] = ("attested-and-sealed", "replayed-only", "failed")

METRICS: dict[str, tuple[str, bool]] = {
    "sharpe": ("sharpe", True),
    "return": ("return", True),
    "pnl": ("pnl", True),
    "sortino": ("sortino", True),
    "calmar": ("calmar", True),
    "max-drawdown": ("maxDrawdown", False),
}
"""``--metric`` name → (the grade's metric key, whether higher ranks first)."""

SHOWN = ("return", "sharpe", "maxDrawdown", "pnl", "sortino", "calmar", "fills", "fees")
"""The grade metrics a row carries (the grade's own decimal strings)."""


@dataclass(slots=True)
class BoardRow:
    """One proof on the board."""

    source: str
    agent: str
    badge: Badge
    reason: str
    filed_under: str = ""
    scenario: str | None = None
    scenario_root: str | None = None
    provenance: str | None = None
    session: str | None = None
    passed: bool | None = None
    checks: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, Any] | None = None
    roots: dict[str, str] = field(default_factory=dict)
    attestation: str | None = None
    issuer: str | None = None
    identity: str | None = None
    """Whom its door's signed statement credits: the trial's parent, else the principal
    (JSON ``identity``; on the page beside a name that is not it: a name is a claim)."""
    trial_of: str | None = None
    """For a trial, the pseudonym of its parent, as its door's signed statement says."""
    trial: int | None = None
    """That trial's number among the parent's (``trialNumber``); ``None``: not numbered."""
    minted: int | None = None
    """How many trials the parent had minted when its door signed (``trialsMinted``)."""
    rank: int | None = None
    unranked: str | None = None
    duplicates: list[str] = field(default_factory=list)
    window: tuple[int, int] | None = None
    forward: ForwardWindow | None = None
    """Set when its door's statement says the session traded a forward tape (:mod:`.forward`)."""

    @property
    def attested(self) -> bool:
        """Its door's signed statement held under the trusted keys."""
        return self.issuer is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "agent": self.agent,
            "identity": self.identity,
            "filedUnder": self.filed_under,
            "badge": self.badge,
            "reason": self.reason,
            "rank": self.rank,
            "unranked": self.unranked,
            "duplicates": self.duplicates,
            "scenario": self.scenario,
            "scenarioRoot": self.scenario_root,
            "provenance": self.provenance,
            "session": self.session,
            "passed": self.passed,
            "checks": self.checks,
            "metrics": self.metrics,
            "roots": self.roots,
            "attestation": self.attestation,
            "window": None if self.window is None else list(self.window),
            **({} if self.forward is None else {"forward": self.forward.to_json()}),
            **(
                {}
                if self.trial_of is None
                else {"trial": {"of": self.trial_of, "number": self.trial, "minted": self.minted}}
            ),
        }


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _object(data: dict[str, Any], name: str) -> dict[str, Any]:
    value = data.get(name)
    return value if isinstance(value, dict) else {}


def _forgery(data: dict[str, Any], catalog: BoardCatalog) -> str | None:
    """Why an embedded scenario unknown here is a forgery: it takes the id of a scenario
    of this machine's catalog (whose root it does not have)."""
    ref = _object(data, "scenario")
    scenario_id, root = _text(ref.get("id")), _text(ref.get("root"))
    known = catalog.index.get(scenario_id) if scenario_id else None
    if known is None:
        return None
    return (
        f"the proof embeds a scenario named {scenario_id} that is not the catalog's "
        f"{scenario_id}: its root is {root}, the catalog's is {known.scenario.root}"
    )


def _sealed(data: dict[str, Any]) -> bool:
    lookahead = _object(_object(data, "record"), "lookahead")
    return lookahead.get("sealed") is True


def _claims(row: BoardRow, data: dict[str, Any]) -> None:
    """What the proof says (identities and roots), read before verification decides."""
    ref, grade, record = _object(data, "scenario"), _object(data, "grade"), _object(data, "record")
    row.scenario, row.scenario_root = _text(ref.get("id")), _text(ref.get("root"))
    row.session = _text(grade.get("session"))
    roots = {
        "proof": data.get("root"),
        "grade": grade.get("root"),
        "record": record.get("root"),
        "scenario": ref.get("root"),
        "tape": ref.get("tapeRoot"),
    }
    row.roots = {k: v for k, v in roots.items() if isinstance(v, str)}


def check_entry(
    entry: Entry,
    *,
    trusted_keys: Mapping[str, Any] | None = None,
    require_catalog: bool = False,
    keys_source: bool = True,
    catalog: BoardCatalog | None = None,
    tapes: PublishedTapes | None = None,
) -> BoardRow:
    """The row of ``entry``: its proof verified by replay, its provenance checked and,
    with ``trusted_keys``, the signed statement of a proof that carries one (the row
    names where the keys were trusted from unless ``keys_source`` is False: a door's
    published board is the same bytes whoever spells the door's URL). This machine's
    catalog is ``catalog`` (``None``: ``KESTREL_CATALOG_PATH``'s); a forward tape a
    proof does not embed is fetched through ``tapes`` (a build's: once per tape)."""
    row = BoardRow(
        entry.source, entry.named or entry.agent, "failed", entry.problem or "", entry.agent
    )
    if entry.problem is not None:
        return row
    data = entry.data
    if not isinstance(data, dict):
        row.reason = "not a Kestrel proof: expected a JSON object"
        return row
    _claims(row, data)
    from ..proof_check import check_proof  # noqa: PLC0415 - the engine loads only here

    catalog = catalog if catalog is not None else BoardCatalog()
    signed = "attestation" in data
    try:
        check = check_proof(
            data,
            catalog.index,
            require_catalog=require_catalog,
            trusted_keys=trusted_keys if signed else None,
            tapes=tapes,
        )
    except ValueError as exc:
        row.reason = f"not a Kestrel proof: {exc}"
        return row
    except KestrelError as exc:
        row.reason = f"{exc.code}: {exc.message}"
        return row
    report = check.report
    if report.provenance is not None:
        row.provenance = report.provenance.source
    if report.mismatch is not None:
        m = report.mismatch
        row.reason = f"verification failed: {m.field}: expected {m.expected}, found {m.found}"
        return row
    forged = _forgery(data, catalog) if row.provenance == "embedded" else None
    if forged is not None:
        row.reason = forged
        return row
    grade = data["grade"]
    sealed = _sealed(data)
    row.window = window(data, catalog)
    fetched = check.fetched.tape if check.fetched is not None else None  # under --trust
    row.forward = forward_window(data, catalog, None if fetched is None else fetched.text)
    attested = check.attested  # the statement held under the trusted keys: whom it names
    checked = attested is not None  # a door's statement whose signature held (``--trust``)
    if attested is not None:
        row.issuer = attested.issuer
        row.identity = attested.trial_of or attested.principal
        row.trial_of, row.trial = attested.trial_of, attested.trial_number
        row.minted = attested.trials_minted
        row.agent = entry.named or row.identity or row.agent
        shown = report.attested_by
        if not keys_source:  # the signer alone, and what it could not check
            shown = (
                f"{attested.issuer} (key {attested.kid})"
                f"{attested.order_unconfirmed()}{check.unconfirmed}"
            )
        row.attestation = f"attested by {shown}"
        row.attestation += "; sealed" if sealed else "; not sealed"
    elif signed:
        row.attestation = "carries a door's signed statement, not checked (no --trust)"
    row.passed = bool(grade["passed"])
    row.checks = {
        c["id"]: ("passed" if c["passed"] else f"failed: {c['detail']}")
        for c in grade["conformance"]["checks"]
    }
    row.metrics = {key: grade["metrics"].get(key) for key in SHOWN}
    row.reason = "verified by replay" + (f", {row.attestation}" if row.attestation else "")
    if row.forward is not None:
        row.reason += f"; {row.forward}"
    stopped = stopped_early(row.window) or open_window(data, checked=checked)
    failed = [f"{k} {v}" for k, v in row.checks.items() if v != "passed"]
    if stopped is not None:
        row.checks[WHOLE_WINDOW] = f"failed: {stopped}"
        failed.append(f"{WHOLE_WINDOW} failed: {stopped}")
    unlike = edge_mismatch(data)
    if unlike is not None:
        failed.append(f"{WHOLE_WINDOW} failed: {unlike}")
    elif stopped is None and unsigned_edge(data, catalog, checked=checked):
        row.reason += (
            f"; {WHOLE_WINDOW} unconfirmed: the forward tape's end is the proof's own word "
            "(no door's statement checked with --trust says where it ended)"
        )
    elif stopped is None and window_unsaid(data, checked=checked):
        row.reason += (
            f"; {WHOLE_WINDOW} unconfirmed: its door's statement does not say whether the "
            "forward window had closed when it signed"
        )
    if failed:  # verified, but not a passing run: the badge says so, with the reason
        row.reason += "; failed " + "; ".join(failed)
        row.passed = False
        return row
    row.badge = "attested-and-sealed" if report.attested_by and sealed else "replayed-only"
    return row
