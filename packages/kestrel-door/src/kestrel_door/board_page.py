"""``GET /board``: the board of the proofs the operator published, served by the door.

The door's page is built by an injected :data:`BoardBuilder` (the composition root
passes ``kestrel_sdk.published_board``: this library never imports the runtime) from the
published proofs (:mod:`.board_records`) under the door's own keys: every proof is
re-verified by replay and its signed statement checked. It is built once per change
(a proof published or taken off, a key added or revoked, a trial minted by a parent
whose trial's proof is published) and cached; a request reads only the roots and agents,
and the count of each such parent, to know whether the board changed. The published
document carries the door's signed count of each such parent's trials minted (as
``GET`` at :data:`~kestrel_protocol.surface.TRIALS_MINTED_PATH` answers it, signed at the
build), so the page says how
many trials each evaluator had minted and when, not only what the proofs' statements
signed when they were made. Routes (no credential: the board is public):

- ``GET /board``: the page (HTML), or its table (JSON) when the request accepts
  ``application/json`` and not ``text/html``;
- ``GET /board.json``: the table (JSON);
- ``GET /board/proofs.json``: the published proofs and the scenarios the door seals as it
  serves (``sealed``: their proofs withheld, only counted, since a proof of a whole window
  tells agents still being evaluated the hidden tape's length and last prices), from
  which ``kestrel board --from URL --trust URL`` rebuilds the same page byte for byte on
  any machine.

Which scenarios the door seals is read with the roots (a forward tape's feed unsealed by
``kestrel-door feed unseal`` in another process shows its proofs on the next request).
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

import anyio
from kestrel_protocol.settings import KestrelSettings
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from .keys import DoorKeys

__all__ = [
    "BOARD_PATHS",
    "BoardBuilder",
    "BoardBuilderFor",
    "BoardPage",
    "BoardRecords",
    "BuiltBoard",
    "SealedNow",
]

logger = logging.getLogger(__name__)

BOARD_PATHS = ("/board", "/board.json", "/board/proofs.json")


class BuiltBoard(Protocol):
    """A built board: its page and its table (JSON text)."""

    @property
    def html(self) -> str: ...
    @property
    def json(self) -> str: ...


class BoardRecords(Protocol):
    """What the page reads of the door's store (:class:`.board_records.SqlBoardRecords`)."""

    def published(self) -> list[Any]: ...
    def board_version(self) -> tuple[tuple[str, str | None], ...]: ...


BoardBuilder = Callable[[dict[str, Any], dict[str, Any]], BuiltBoard]
"""``(published document, the door's JWKS) → the built board``."""

BoardBuilderFor = Callable[[KestrelSettings], BoardBuilder]
"""``the door's settings → the builder of boards checked against its catalog
(``KestrelSettings.catalog_dirs``, the tapes' shapes remembered in its ``home``)``."""


class DocumentOf(Protocol):
    """``([(agent, proof), …], the scenarios the door seals, the door's signed counts of
    the published trials' parents) → the published document`` (``/board/proofs.json``:
    no proof of a sealed scenario, no figure of its tape)."""

    def __call__(
        self,
        items: list[tuple[str | None, dict[str, Any]]],
        sealed: Iterable[str] = (),
        counts: Iterable[dict[str, Any]] = (),
    ) -> dict[str, Any]: ...


SealedNow = Callable[[], tuple[str, ...]]
"""The scenarios the door seals now (read with the board's version)."""

CountOf = Callable[[str], dict[str, Any]]
"""``a parent's pseudonym → the door's signed answer of how many trials it has minted``
(:meth:`.attest.Attestor.trials_minted`)."""


def _trial_of(proof: Any) -> str | None:
    """The parent the door's statement in ``proof`` names (``trialOf``), if any."""
    try:
        statement = json.loads(base64.b64decode(proof["attestation"]["payload"]))
        trial_of = statement["predicate"].get("trialOf")
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return trial_of if isinstance(trial_of, str) else None


@dataclass(frozen=True, slots=True)
class _Cached:
    version: object
    html: bytes
    table: bytes
    proofs: bytes
    parents: tuple[str, ...] = ()
    """The parents whose trials' proofs are published (their counts are on the page)."""


class BoardPage:
    """The door's board, rebuilt when what it is built from changes."""

    def __init__(
        self,
        records: BoardRecords,
        keys: DoorKeys,
        build: BoardBuilder,
        document: DocumentOf,
        sealed: SealedNow = tuple,
        *,
        count: CountOf | None = None,
    ) -> None:
        self._records = records
        self._sealed = sealed
        self._keys = keys
        self._build = build
        self._document = document
        self._count = count
        self._cached: _Cached | None = None
        self._lock = anyio.Lock()
        self.builds = 0
        """How many times the board was built (once per change, never per request)."""

    def _version(self, parents: Sequence[str]) -> tuple[object, ...]:
        """What the board is built from: the published roots and agents, the keys (one
        added or revoked), the trials each of ``parents`` has minted and the scenarios
        the door seals."""
        keys = json.dumps(self._keys.jwks(), sort_keys=True)
        minted = tuple(self._keys.records.trials_minted_by(p) for p in parents)
        minted = minted if self._count else ()
        return (self._records.board_version(), keys, minted, self._sealed())  # or unsealed

    def _built(self, version: tuple[object, ...]) -> _Cached:
        items = [(p.agent, json.loads(p.proof)) for p in self._records.published()]
        parents = tuple(sorted({p for _, proof in items if (p := _trial_of(proof)) is not None}))
        counts = [self._count(p) for p in parents] if self._count is not None else []
        document = self._document(items, cast("tuple[str, ...]", version[3]), counts)
        built = self._build(document, self._keys.jwks())
        self.builds += 1
        logger.info("board: built from %d published proofs", len(items))
        minted = tuple(int(answer["trialsMinted"]) for answer in counts)  # the counts signed
        return _Cached(
            (*version[:2], minted if self._count else (), version[3]),
            built.html.encode("utf-8", "backslashreplace"),
            built.json.encode("utf-8", "backslashreplace"),
            json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8"),
            parents,
        )

    def _current_version(self) -> tuple[object, ...]:
        cached = self._cached
        return self._version(cached.parents if cached is not None else ())

    async def current(self) -> _Cached:
        """The board as it stands (built again only if it changed)."""
        version = await anyio.to_thread.run_sync(self._current_version)
        cached = self._cached
        if cached is not None and cached.version == version:
            return cached
        async with self._lock:
            version = await anyio.to_thread.run_sync(self._current_version)
            if self._cached is None or self._cached.version != version:
                self._cached = await anyio.to_thread.run_sync(self._built, version)
            return self._cached

    def routes(self) -> list[BaseRoute]:
        async def page(request: Request) -> Response:
            board = await self.current()
            accept = request.headers.get("accept", "")
            if "application/json" in accept and "text/html" not in accept:
                return _json(board.table)
            return Response(board.html, media_type="text/html; charset=utf-8")

        async def table(request: Request) -> Response:
            return _json((await self.current()).table)

        async def proofs(request: Request) -> Response:
            return _json((await self.current()).proofs)

        return [
            Route("/board", page, methods=["GET"]),
            Route("/board.json", table, methods=["GET"]),
            Route("/board/proofs.json", proofs, methods=["GET"]),
        ]


def _json(body: bytes) -> Response:
    return Response(body, media_type="application/json", headers={"Vary": "Accept"})
