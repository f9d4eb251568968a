"""A door's published board: the proofs an operator made public, as one document that
anyone can download and rebuild the same page from.

The door serves ``/board/proofs.json``: ``{"kind": "kestrel.board.proofs", "proofs":
[{"agent": NAME or null, "proof": PROOF}, …], "sealed": [ID, …], "trialsMinted":
[ANSWER, …]}``, the proofs in the order of their roots, the scenarios the door seals as
it serves (sorted) and, for each parent whose trial a published proof is, the door's
signed count of its trials minted (the answer of ``GET`` at
:data:`~kestrel_protocol.surface.TRIALS_MINTED_PATH`, in the order of ``trialOf``),
signed when the door last built its board (a trial minted since rebuilds it): the board
states each such count, when the door signed it and where anyone asks again; a parent
the document carries no count of (or one that does not hold under the keys) says so on
its row. A proof of a scenario the door seals is withheld (``"withheld": [{"scenario":
ID, "proofs": N}, …]`` says how many, and nothing else of them): it carries every frame
of a run that traded the window whole, so its length and last prices, and its grade's
figures tell what the hidden tape did to agents still trading it; once the scenario is
unsealed it is served as any other. For the same reason the board trades no baseline on
a sealed scenario. Its ``/board`` page is :func:`published_board` of that document under
the door's own keys (ranked by Sharpe, only attested proofs ranked); ``kestrel board
--from URL --trust URL`` downloads the document and the keys and runs the same function,
so the two pages are the same bytes: nothing on them depends on the machine or the clock
(a row's source is ``proofs.json#N``, the baseline is traded in a throwaway home)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .build import board_of, checked
from .catalog import BoardCatalog
from .html import render_board
from .sources import Entry
from .trials import CountSource

if TYPE_CHECKING:
    from ..trials_minted import DoorCount

__all__ = [
    "PUBLISHED_KIND",
    "PUBLISHED_PATH",
    "PublishedBoard",
    "published_board",
    "published_counts",
    "published_document",
    "published_entries",
    "published_seals",
]

PUBLISHED_KIND = "kestrel.board.proofs"
PUBLISHED_PATH = "/board/proofs.json"
"""Where a door serves the published proofs (below its base URL)."""

_FILED = "published"


@dataclass(frozen=True, slots=True)
class PublishedBoard:
    """The page (HTML) and the table (JSON text) of a published board, and whether a
    row failed."""

    html: str
    json: str
    failed: int


def _root(item: Mapping[str, Any]) -> str:
    proof = item.get("proof")
    root = proof.get("root") if isinstance(proof, dict) else None
    return root if isinstance(root, str) else ""


def _scenario(proof: Mapping[str, Any]) -> str | None:
    scenario = proof.get("scenario")
    found = scenario.get("id") if isinstance(scenario, dict) else None
    return found if isinstance(found, str) else None


def published_document(
    items: list[tuple[str | None, dict[str, Any]]],
    sealed: Iterable[str] = (),
    counts: Iterable[dict[str, Any]] = (),
) -> dict[str, Any]:
    """The download of the published ``(agent, proof)`` pairs, in the order of roots, on
    a door sealing the scenarios ``sealed`` (their proofs withheld, only counted), with
    ``counts``: the door's signed answers of how many trials each published trial's
    parent has minted (none: no ``trialsMinted``)."""
    shut = set(sealed)
    withheld = Counter(_scenario(proof) for _, proof in items if _scenario(proof) in shut)
    proofs = [{"agent": a, "proof": p} for a, p in items if _scenario(p) not in shut]
    proofs.sort(key=lambda item: (_root(item), item["agent"] or ""))
    document: dict[str, Any] = {"kind": PUBLISHED_KIND, "proofs": proofs, "sealed": sorted(shut)}
    if withheld:
        tally = sorted((str(s), n) for s, n in withheld.items())
        document["withheld"] = [{"scenario": s, "proofs": n} for s, n in tally]
    answers = sorted(counts, key=lambda answer: str(answer.get("trialOf")))
    return document | ({"trialsMinted": answers} if answers else {})


def published_seals(document: Mapping[str, Any]) -> frozenset[str]:
    """The scenarios a published document says its door seals (``ValueError`` when its
    ``sealed`` is not a list of ids); a document without one seals none."""
    sealed = document.get("sealed", [])
    if not isinstance(sealed, list) or not all(isinstance(i, str) for i in sealed):
        raise ValueError("not a published board: sealed is not a list of scenario ids")
    return frozenset(sealed)


def published_counts(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The door's signed counts a published document carries (``ValueError`` when its
    ``trialsMinted`` is not a list of objects); a document without one carries none."""
    answers = document.get("trialsMinted", [])
    if not isinstance(answers, list) or not all(isinstance(a, dict) for a in answers):
        raise ValueError("not a published board: trialsMinted is not a list of signed counts")
    return answers


def _carried(answers: list[dict[str, Any]], trusted_keys: Mapping[str, Any]) -> CountSource:
    """The counts of ``answers`` (a published document's), each checked under
    ``trusted_keys`` as a count its door answered now is."""

    def counts(parents: Sequence[tuple[str, str]]) -> dict[tuple[str, str], DoorCount]:
        from ..trials_minted import DoorCount, checked_count  # noqa: PLC0415

        found: dict[tuple[str, str], DoorCount] = {}
        for issuer, parent in parents:
            answer = next((a for a in answers if a.get("trialOf") == parent), None)
            found[(issuer, parent)] = (
                DoorCount(unread="the published board carries no count of the door's for it")
                if answer is None
                else checked_count(answer, trusted_keys, issuer, parent, "its published count")
            )
        return found

    return counts


def published_entries(document: Any) -> list[Entry]:
    """The board's entries of a published document (``ValueError`` when it is not one)."""
    if not isinstance(document, dict) or document.get("kind") != PUBLISHED_KIND:
        raise ValueError(f"not a published board: expected an object of kind {PUBLISHED_KIND}")
    items = document.get("proofs")
    if not isinstance(items, list):
        raise ValueError("not a published board: proofs is not a list")
    entries = []
    for i, item in enumerate(items, start=1):
        source = f"proofs.json#{i}"
        if not isinstance(item, dict):
            entries.append(Entry(source, _FILED, problem="not an object with agent and proof"))
            continue
        agent = item.get("agent")
        named = agent if isinstance(agent, str) and agent else None
        entries.append(Entry(source, named or _FILED, item.get("proof"), named=named))
    return entries


def published_board(
    document: Any,
    trusted_keys: Mapping[str, Any],
    catalog_paths: Sequence[Path] | None = None,
    home: Path | None = None,
) -> PublishedBoard:
    """The board of a published document under ``trusted_keys`` (the door's JWKS),
    checked against the catalog of ``catalog_paths`` (``None``: ``KESTREL_CATALOG_PATH``'s)."""
    from ..published_tape import PublishedTapes  # noqa: PLC0415 - httpx loads only here

    catalog, tapes = BoardCatalog(catalog_paths, home), PublishedTapes()  # read once a build
    rows = [  # the keys' source unnamed: the door's page and a rebuild are the same bytes
        checked(
            e,
            trusted_keys=trusted_keys,
            require_catalog=False,
            keys_source=False,
            catalog=catalog,
            tapes=tapes,
        )
        for e in published_entries(document)
    ]
    sealed = published_seals(document)  # a published document: read_entries checked it
    counts = _carried(published_counts(document), trusted_keys)
    board = board_of(
        rows, "sharpe", attested_only=True, counts=counts, sealed=sealed, catalog=catalog
    )
    table = json.dumps(board.to_json(), indent=2) + "\n"
    return PublishedBoard(render_board(board), table, len(board.failed))
