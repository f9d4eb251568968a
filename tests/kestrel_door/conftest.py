"""Door test kit: a scripted runtime shared by principals (behind the shipped
``ScriptedTransport``), the door's stores, an app builder."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from kestrel_door import (
    AuditLog,
    DoorConfig,
    DoorStore,
    IssuedTokens,
    TurnCredentials,
    create_door_app,
    create_turn_credentials,
)
from kestrel_protocol.ports import SessionGate, Transport
from kestrel_protocol.testing import ScriptedTransport, runs_on

if TYPE_CHECKING:
    from tests.kestrel_door.test_attested import Replicas

BASE = "http://127.0.0.1:8787"


@dataclass
class Kit:
    home: Path
    store: DoorStore
    tokens: IssuedTokens
    audit: AuditLog
    creds: TurnCredentials
    config: DoorConfig

    sessions: SessionsScript
    runtimes: list[Any] = field(default_factory=list)

    def transport_for(self, principal: str) -> Transport:
        return ScriptedTransport(runs_on(self.sessions, principal, reader=principal))

    def app(self, **overrides: Any) -> Any:
        options: dict[str, Any] = {
            "transport_for": self.transport_for,
            "turn_credentials": self.creds,
            "grant_verifiers": [self.tokens],
            "audit": self.audit,
        }
        options.update(overrides)
        config = options.pop("config", self.config)
        return create_door_app(config, **options)

    def runtime_app(self, gate: SessionGate | None = None, **overrides: Any) -> Any:
        """The door over a real runtime shared by every principal (``gate`` is the runtime's)."""
        from kestrel_sdk import local_transport

        owner: Any = local_transport(home=self.home / "runtime", gate=gate)
        self.runtimes.append(owner)
        return self.app(
            transport_for=lambda p: local_transport(principal=p, runtime=owner.runtime),
            **overrides,
        )

    def token(self, principal: str = "alice", scopes: tuple[str, ...] = ()) -> str:
        _, token = self.tokens.issue(
            principal, list(scopes or ("kestrel:read", "kestrel:trade", "kestrel:grade"))
        )
        return token


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[Kit]:
    store = DoorStore(tmp_path / "door.db")
    kit = Kit(
        home=tmp_path,
        store=store,
        tokens=IssuedTokens(store),
        audit=AuditLog(store),
        creds=create_turn_credentials(),
        config=DoorConfig(base_url=BASE),
        sessions=SessionsScript(),
    )
    yield kit
    for owner in kit.runtimes:
        await owner.aclose()
    store.close()


ClientFactory = Callable[..., httpx.AsyncClient]


def asgi_client(app: Any, token: str | None = None, **headers: str) -> httpx.AsyncClient:
    """An in-process client for ``app`` (no sockets), optionally with a bearer."""
    all_headers = dict(headers)
    if token is not None:
        all_headers["Authorization"] = f"Bearer {token}"
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url=BASE, headers=all_headers
    )


_SCENARIO_ROOT = "sha256:" + "1" * 64


def _frame(sid: str, seq: int, status: str = "open") -> Any:
    from kestrel_protocol import AccountState, Clock, FrameBar, ScenarioRef, SessionFrame

    money = "100000.00"
    return SessionFrame(
        session=sid,
        seq=seq,
        scenario=ScenarioRef(id="acme-trend", root=_SCENARIO_ROOT),
        clock=Clock(bar=seq, time="2020-01-01", remaining=100 - seq),
        status=status,  # type: ignore[arg-type]
        marks={"ACME": "101.25"},
        bars={
            "ACME": FrameBar(
                open="101.00", high="101.50", low="100.75", close="101.25", volume=1000
            )
        },
        account=AccountState(
            cash=money,
            equity=money,
            realized="0.00",
            unrealized="0.00",
            fees="0.00",
            peak=money,
            drawdown="0.00",
        ),
        positions=[],
        orders=[],
        events=[],
    )


class SessionsScript:
    """The runtime's methods, scripted over session state every principal shares.

    Each principal's transport is ``ScriptedTransport(runs_on(script, principal))``: it
    stands in for the runtime with valid protocol objects, so the door's own tests do
    not depend on the engine's state.
    """

    def __init__(self) -> None:
        self.owner: dict[str, str] = {}
        self.seq: dict[str, int] = {}
        self.heads: dict[str, str] = {}
        self.pentads: dict[str, list[str]] = {}
        self.closed: set[str] = set()
        self.artifacts: dict[str, dict[str, Any]] = {}
        self.opened = 0

    def _own(self, principal: str, sid: str) -> None:
        from kestrel_protocol import KestrelError

        if self.owner.get(sid) != principal:
            raise KestrelError("UNKNOWN_SESSION", f"no session {sid!r}", {"session": sid})

    def _open_check(self, principal: str, sid: str) -> None:
        from kestrel_protocol import KestrelError

        self._own(principal, sid)
        if sid in self.closed:
            raise KestrelError("SESSION_CLOSED", "the session is closed", {"session": sid})

    async def catalog(self) -> Any:
        from kestrel_protocol import Catalog, CatalogScenario, StatementKind

        return Catalog.with_root(
            scenarios=[
                CatalogScenario(
                    id="acme-trend",
                    title="ACME trend",
                    symbols=["ACME"],
                    interval="1d",
                    bars=100,
                    root=_SCENARIO_ROOT,
                    tape_root=_SCENARIO_ROOT,
                    sealed=False,
                )
            ],
            statement_kinds=[
                StatementKind(kind="advance", syntax="advance N", example="advance 5", summary="s")
            ],
        )

    async def scenario(self, principal: str, scenario: str) -> Any:
        from kestrel_protocol import KestrelError

        if scenario != "acme-trend":
            raise KestrelError("UNKNOWN_SCENARIO", f"no scenario {scenario!r}", {})
        from kestrel_protocol import Artifact

        return Artifact.parse({"kind": "kestrel.scenario", "id": scenario})

    async def tape(self, principal: str, scenario: str) -> str:
        await self.scenario(principal, scenario)
        return "time,open,high,low,close,volume\n" + "".join(
            f"2020-01-{d:02d},1,1,1,1,1\n" for d in range(1, 29)
        )

    async def validate(self, source: str, scenario: str | None) -> Any:
        from kestrel_protocol import Diagnostic, ValidationReport

        bad = "banana" in source
        diags = [Diagnostic(line=1, column=1, code="E1", severity="error", message="no")]
        return ValidationReport(
            ok=not bad, statements=source.count("\n"), diagnostics=diags if bad else []
        )

    async def open_session(
        self, principal: str, scenario: str, label: str | None, payment: Any
    ) -> Any:
        from kestrel_protocol import Delivery, KestrelError, SessionOpened

        if scenario != "acme-trend":
            raise KestrelError("UNKNOWN_SCENARIO", f"no scenario {scenario!r}", {})
        self.opened += 1
        sid = f"ks_fake{self.opened:04d}"
        self.owner[sid] = principal
        self.seq[sid] = 0
        self.heads[sid] = Delivery.of(_frame(sid, 0)).frame_root
        self.pentads[sid] = []
        return SessionOpened(gated=False, session_id=sid)

    async def submit(
        self, principal: str, session_id: str, source: str, wait: float | None = None
    ) -> Any:
        from kestrel_protocol import Delivery, KestrelError, Pentad, PentadBody, SessionResponse

        self._open_check(principal, session_id)
        if "banana" in source:
            raise KestrelError("INVALID_SOURCE", "line 1: not a statement", {"line": 1})
        seq = self.seq[session_id] + 1
        pentad = Pentad.with_root(
            session=session_id,
            seq=seq,
            prev=self.heads[session_id],
            body=PentadBody(bytes=source),
        )
        delivery = Delivery.of(_frame(session_id, seq))
        self.seq[session_id] = seq
        self.heads[session_id] = delivery.frame_root
        self.pentads[session_id].append(pentad.root)
        self.artifacts[pentad.root] = pentad.to_json()
        return SessionResponse(disposition="applied", pentad=pentad, delivery=delivery)

    async def frame(self, principal: str, session_id: str) -> Any:
        from kestrel_protocol import Delivery

        self._own(principal, session_id)
        return Delivery.of(_frame(session_id, self.seq[session_id]))

    async def history(self, principal: str, session_id: str, bars: int, symbol: str | None) -> Any:
        from kestrel_protocol import History

        self._own(principal, session_id)
        frame = _frame(session_id, self.seq[session_id])
        row = {"time": frame.clock.time, "symbol": "ACME", **frame.bars["ACME"].to_json()}
        data = {"session": session_id, "scenario": frame.scenario.to_json(), "symbol": symbol}
        return History.parse({**data, "clock": frame.clock.to_json(), "bars": [row]})

    async def blotter(self, principal: str, session_id: str) -> Any:
        from kestrel_protocol import Blotter

        self._own(principal, session_id)
        return Blotter.with_root(session=session_id, orders=[], fills=[])

    async def close(self, principal: str, session_id: str) -> Any:
        from kestrel_protocol import ScenarioRef, SessionRecord

        self._open_check(principal, session_id)
        self.closed.add(session_id)
        blotter = await self.blotter(principal, session_id)
        record = SessionRecord.with_root(
            session=session_id,
            scenario=ScenarioRef(id="acme-trend", root=_SCENARIO_ROOT),
            label="t",
            pentads=self.pentads[session_id],
            head=self.heads[session_id],
            blotter_root=blotter.root,
            lookahead={"sealed": False, "reads": []},
        )
        self.artifacts[record.root] = record.to_json()
        return record

    async def grade(self, principal: str, session_id: str) -> Any:
        from kestrel_protocol import (
            Conformance,
            GradeResult,
            KestrelError,
            Metrics,
            ScenarioRef,
        )

        self._own(principal, session_id)
        if session_id not in self.closed:
            raise KestrelError("SESSION_CLOSED", "close the session before grading", {})
        record = next(
            a for a in self.artifacts.values() if a.get("session") == session_id and "head" in a
        )
        zero = "0.00000000"
        grade = GradeResult.with_root(
            session=session_id,
            scenario=ScenarioRef(id="acme-trend", root=_SCENARIO_ROOT),
            record=record["root"],
            head=record["head"],
            metrics=Metrics.model_validate(
                {
                    "pnl": "0.00",
                    "return": zero,
                    "maxDrawdown": zero,
                    "sharpe": zero,
                    "fills": 0,
                    "fees": "0.00",
                    "exposure": zero,
                    "turnover": zero,
                    "sortino": None,
                    "calmar": None,
                    "buyAndHold": zero,
                    "trades": 0,
                    "winRate": None,
                    "bestTrade": None,
                    "worstTrade": None,
                    "avgTrade": None,
                    "profitFactor": None,
                    "expectancy": None,
                }
            ),
            conformance=Conformance.with_root(checks=[]),
            passed=True,
        )
        self.artifacts[grade.root] = grade.to_json()
        return grade

    async def resume(self, principal: str, token: str) -> Any:
        from kestrel_protocol import KestrelError

        raise KestrelError("UNKNOWN_OPERATION", "no such operation", {})

    async def artifact(self, root: str, reader: str | None) -> dict[str, Any]:
        from kestrel_protocol import KestrelError

        found = self.artifacts.get(root)
        if found is None:
            raise KestrelError("UNKNOWN_ARTIFACT", f"no artifact {root}", {"root": root})
        return found

    async def verify(self, grade: Any, reader: str | None) -> Any:
        from kestrel_protocol import VerificationReport

        return VerificationReport(ok=grade.root in self.artifacts, grade=grade.root)

    async def proof(self, principal: str, session_id: str, embed_tape: bool) -> Any:
        # Proofs are replays of a real engine: the door's proof tests use runtime_app.
        raise NotImplementedError("the door's sessions script makes no proofs")

    async def proof_of_grade(self, grade_root: str, reader: str | None) -> Any:
        raise NotImplementedError("the door's sessions script makes no proofs")


@pytest.fixture
def shared_store(postgres_dsn: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every door and door command of the test on one PostgreSQL store
    (``KESTREL_STORE``)."""
    monkeypatch.setenv("KESTREL_STORE", postgres_dsn)
    return postgres_dsn


@pytest.fixture
def replicas(postgres_dsn: str, tmp_path: Path) -> Iterator[Replicas]:
    """Two ``kestrel-door serve`` replicas on one PostgreSQL store, stopped afterwards."""
    from tests.kestrel_door.test_attested import Replicas

    made: list[Replicas] = []
    try:
        made.append(Replicas(postgres_dsn, tmp_path))
        yield made[0]
    finally:
        for each in made:
            each.stop()
