"""A fake Kestrel transport returning real protocol objects (roots that verify).

Used to test the MCP face without the runtime, and to prove lossless pass-through:
with ``newer=True`` every object carries members this version of Kestrel does not
know. Scripted behaviour keyed by the source text: ``stand down`` stands down,
``bogus`` is refused ``INVALID_SOURCE``, ``explode`` raises an unexpected fault,
``slow`` is held until released (:meth:`AcmeScript.release`, or a submit of ``release``
on any session, for a script served in another process), ``print`` writes to stdout and
logs from deep inside. :func:`scripted` is the transport a face runs it behind.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import anyio
from kestrel_protocol import (
    Blotter,
    Catalog,
    CatalogScenario,
    Delivery,
    GradeResult,
    History,
    Offer,
    OperationResumption,
    Payment,
    Pentad,
    Scenario,
    SessionFrame,
    SessionOpened,
    SessionRecord,
    SessionResponse,
    StatementKind,
    ValidationReport,
    VerificationReport,
    root_of,
)
from kestrel_protocol.testing import ScriptedTransport, runs_on
from kestrel_sdk import SdkLocalError

ZERO = "sha256:" + "0" * 64
EXTRA: dict[str, Any] = {"futureMember": {"nested": [1, "two", None, True]}, "zFlag": "ü✓"}
deep_logger = logging.getLogger("kestrel_sdk.runtime.fake_engine")


def _extra(newer: bool) -> dict[str, Any]:
    return dict(EXTRA) if newer else {}


class AcmeScript:
    """The runtime's methods, scripted and deterministic: what :func:`scripted` runs each
    tool's binding on (``ScriptedTransport(runs_on(AcmeScript()))``)."""

    def __init__(self, *, newer: bool = False, grade_steps: int = 0, gate: bool = False) -> None:
        self.newer = newer
        self.grade_steps = grade_steps
        self.gate = gate
        self.slow_reads = False
        """Frames are held until released, as a slow submit is."""
        self._started: anyio.Event | None = None
        self._released: anyio.Event | None = None
        self.sessions: dict[str, dict[str, Any]] = {}
        self.artifacts: dict[str, dict[str, Any]] = {}
        self.operations: dict[str, int] = {}
        self.scenario_obj = Scenario.with_root(
            id="acme-trend",
            title="ACME trend",
            description="Upward drift.",
            instruments=[{"symbol": "ACME", "tick": "0.01", "lot": 1}],
            tape={
                "interval": "1d",
                "bars": 3,
                "start": "2024-01-01T00:00:00Z",
                "end": "2024-01-03T00:00:00Z",
                "barsPerYear": 252,
                "root": ZERO,
            },
            account={
                "cash": "100000.00",
                "shortable": False,
                "maxPosition": 1000,
                "maxDrawdown": "1.0",
            },
            fees={"bps": "10", "minimum": "0.00"},
            fill={"participation": "1", "slippageBps": "0"},
            **_extra(newer),
        )

    # -- holding a call until the test lets it go ----------------------------------
    def _events(self) -> tuple[anyio.Event, anyio.Event]:
        if self._started is None or self._released is None:
            self._started, self._released = anyio.Event(), anyio.Event()
        return self._started, self._released

    async def _hold(self) -> None:
        started, released = self._events()
        started.set()
        await released.wait()

    async def held(self) -> None:
        """Wait until a call is being held."""
        await self._events()[0].wait()

    def release(self) -> None:
        """Let every held call (and every later one) go on."""
        self._events()[1].set()

    # -- catalog -----------------------------------------------------------------
    async def catalog(self) -> Catalog:
        entries = [
            CatalogScenario(
                id=sid,
                title=sid.upper(),
                symbols=["ACME"],
                interval="1d",
                bars=3,
                root=self.scenario_obj.root,
                tape_root=self.scenario_obj.tape.root,
                sealed=False,
                **_extra(self.newer),
            )
            for sid in ("acme-chop", "acme-crash", "acme-trend")
        ]
        kinds = [
            StatementKind(
                kind="order", syntax="buy|sell QTY SYMBOL", example="buy 10 ACME", summary="o"
            ),
            StatementKind(kind="cancel", syntax="cancel REF", example="cancel o1", summary="c"),
            StatementKind(kind="advance", syntax="advance [N]", example="advance 5", summary="a"),
            StatementKind(
                kind="stand-down", syntax="stand down", example="stand down", summary="s"
            ),
        ]
        return Catalog.with_root(scenarios=entries, statement_kinds=kinds, **_extra(self.newer))

    async def scenario(self, principal: str, scenario: str) -> Scenario:
        if scenario != "acme-trend":
            raise SdkLocalError(
                "UNKNOWN_SCENARIO", f"no scenario {scenario!r}", {"scenario": scenario}
            )
        return self.scenario_obj

    async def tape(self, principal: str, scenario: str) -> str:
        await self.scenario(principal, scenario)
        return "time,symbol,open,high,low,close,volume\n2024-01-01T00:00:00Z,ACME,1,2,0.5,1.5,100\n"

    async def validate(self, source: str, scenario: str | None = None) -> ValidationReport:
        bad = "bogus" in source
        diagnostics = (
            [
                {
                    "line": 1,
                    "column": 1,
                    "code": "K100",
                    "severity": "error",
                    "message": "unknown keyword",
                }
            ]
            if bad
            else []
        )
        return ValidationReport.parse(
            {
                "ok": not bad,
                "statements": len([line for line in source.splitlines() if line.strip()]),
                "diagnostics": diagnostics,
                **_extra(self.newer),
            }
        )

    # -- sessions ----------------------------------------------------------------
    async def open_session(
        self, principal: str, scenario: str, label: str | None, payment: Payment | None
    ) -> SessionOpened:
        await self.scenario(principal, scenario)
        if self.gate and payment is None:
            offer = Offer.with_root(
                offer_id="of_1",
                scenario=scenario,
                amount="1.00",
                currency="USD",
                description="one more session today",
                expires_at="2024-01-02T00:00:00Z",
                accepts=["voucher"],
                **_extra(self.newer),
            )
            return SessionOpened(gated=True, payment=offer)
        if payment is not None and payment.voucher != "good":
            raise SdkLocalError("PAYMENT_INVALID", "voucher not valid", {})
        label = label or str(len(self.sessions) + 1)
        session_id = f"ks_fake{label}"
        if session_id in self.sessions and self.sessions[session_id]["status"] == "closed":
            raise SdkLocalError("SESSION_CLOSED", "session is closed", {"session": session_id})
        if session_id not in self.sessions:
            frame = self._frame(session_id, 0, "open")
            self.sessions[session_id] = {
                "status": "open",
                "label": label,
                "seq": 0,
                "delivery": self._delivery(frame),
                "pentads": [],
            }
        return SessionOpened(gated=False, session_id=session_id)

    def _get(self, session_id: str) -> dict[str, Any]:
        state = self.sessions.get(session_id)
        if state is None:
            raise SdkLocalError(
                "UNKNOWN_SESSION", f"no session {session_id!r}", {"session": session_id}
            )
        return state

    def _frame(self, session_id: str, seq: int, status: str) -> SessionFrame:
        return SessionFrame.parse(
            dict(
                session=session_id,
                seq=seq,
                scenario={"id": "acme-trend", "root": self.scenario_obj.root},
                clock={"bar": seq, "time": f"2024-01-0{seq + 1}T00:00:00Z", "remaining": 2 - seq},
                status=status,
                marks={"ACME": "101.20"},
                bars={
                    "ACME": {
                        "open": "101.00",
                        "high": "101.50",
                        "low": "100.90",
                        "close": "101.20",
                        "volume": 5000,
                    }
                },
                account={
                    "cash": "100000.00",
                    "equity": "100000.00",
                    "realized": "0.00",
                    "unrealized": "0.00",
                    "fees": "0.00",
                    "peak": "100000.00",
                    "drawdown": "0.00",
                },
                positions=[],
                orders=[],
                events=[{"type": "accepted", "order": "o1", "bar": seq}] if seq else [],
                **_extra(self.newer),
            )
        )

    def _delivery(self, frame: SessionFrame) -> Delivery:
        return Delivery(frame=frame, frame_root=root_of(frame), **_extra(self.newer))

    async def submit(
        self, principal: str, session_id: str, source: str, wait: float | None = None
    ) -> SessionResponse:
        state = self._get(session_id)
        if state["status"] == "closed":
            raise SdkLocalError("SESSION_CLOSED", "session is closed", {"session": session_id})
        if state["status"] == "stood-down":
            raise SdkLocalError("SESSION_STOOD_DOWN", "session stood down", {"session": session_id})
        if "bogus" in source:
            raise SdkLocalError(
                "INVALID_SOURCE",
                "the source has 1 error",
                {
                    "diagnostics": [
                        {
                            "line": 1,
                            "column": 1,
                            "code": "K100",
                            "severity": "error",
                            "message": "unknown keyword",
                        }
                    ]
                },
            )
        if "explode" in source:
            raise RuntimeError("/secret/internal/path.py line 42: invariant broken")
        if source == "release":
            self.release()
        if "slow" in source:
            await self._hold()
        if "print" in source:
            print("stray print from deep inside the runtime")
            sys.stdout.flush()
            deep_logger.warning("a log line from deep inside the runtime")
        stood = "stand down" in source
        seq = state["seq"] + 1
        pentad = Pentad.with_root(
            session=session_id,
            seq=seq,
            prev=state["delivery"].frame_root,
            body={"mediaType": "text/x-kestrel", "bytes": source},
            **_extra(self.newer),
        )
        self.artifacts[pentad.root] = pentad.to_json()
        status = "stood-down" if stood else "open"
        delivery = self._delivery(self._frame(session_id, seq, status))
        state.update(seq=seq, delivery=delivery, status=status)
        state["pentads"].append(pentad.root)
        members: dict[str, Any] = {
            "disposition": "stood-down" if stood else "applied",
            "pentad": pentad,
            "delivery": delivery,
            **_extra(self.newer),
        }
        if stood:
            members["stand_down"] = {"reason": "statement", "detail": "stand down"}
        return SessionResponse(**members)

    async def frame(self, principal: str, session_id: str) -> Delivery:
        if self.slow_reads:
            await self._hold()
        delivery: Delivery = self._get(session_id)["delivery"]
        return delivery

    async def history(
        self, principal: str, session_id: str, bars: int, symbol: str | None
    ) -> History:
        frame = self._get(session_id)["delivery"].frame
        row = {"time": frame.clock.time, "symbol": "ACME", **frame.bars["ACME"].to_json()}
        data = {"session": session_id, "scenario": frame.scenario.to_json(), "symbol": symbol}
        return History.parse({**data, "clock": frame.clock.to_json(), "bars": [row]})

    async def blotter(self, principal: str, session_id: str) -> Blotter:
        self._get(session_id)
        return Blotter.with_root(session=session_id, orders=[], fills=[], **_extra(self.newer))

    async def close(self, principal: str, session_id: str) -> SessionRecord:
        state = self._get(session_id)
        blotter = await self.blotter(principal, session_id)
        self.artifacts[blotter.root] = blotter.to_json()
        record = SessionRecord.with_root(
            session=session_id,
            scenario={"id": "acme-trend", "root": self.scenario_obj.root},
            label=state["label"],
            pentads=list(state["pentads"]),
            head=state["delivery"].frame_root,
            blotter_root=blotter.root,
            lookahead={"sealed": False, "reads": []},
            **_extra(self.newer),
        )
        state["status"] = "closed"
        state["record"] = record
        self.artifacts[record.root] = record.to_json()
        return record

    def _grade(self, session_id: str) -> GradeResult:
        state = self._get(session_id)
        record: SessionRecord = state["record"]
        conformance: dict[str, Any] = {
            "checks": [{"id": "chain-intact", "passed": True, "detail": "ok"}]
        }
        conformance["root"] = root_of(conformance)
        grade = GradeResult.with_root(
            session=session_id,
            scenario={"id": "acme-trend", "root": self.scenario_obj.root},
            record=record.root,
            head=record.head,
            metrics={
                "pnl": "0.00",
                "return": "0.00000000",
                "maxDrawdown": "0.00000000",
                "sharpe": "0.00000000",
                "fills": 0,
                "fees": "0.00",
                "exposure": "0.00000000",
                "turnover": "0.00000000",
                "sortino": None,
                "calmar": None,
                "buyAndHold": "0.00000000",
                "trades": 0,
                "winRate": None,
                "bestTrade": None,
                "worstTrade": None,
                "avgTrade": None,
                "profitFactor": None,
                "expectancy": None,
            },
            conformance=conformance,
            passed=True,
            **_extra(self.newer),
        )
        self.artifacts[grade.root] = grade.to_json()
        return grade

    async def grade(self, principal: str, session_id: str) -> GradeResult | OperationResumption:
        state = self._get(session_id)
        if "record" not in state:
            raise SdkLocalError("SESSION_CLOSED", "close the session before grading", {})
        if self.grade_steps:
            token = f"tok_{session_id}"
            self.operations[token] = self.grade_steps
            return OperationResumption.parse(
                {
                    "operation": f"op_{session_id}",
                    "progress": {"done": 0, "total": self.grade_steps},
                    "resumeAfterMs": 10,
                    "token": token,
                    **_extra(self.newer),
                }
            )
        return self._grade(session_id)

    async def resume(self, principal: str, token: str) -> GradeResult | OperationResumption:
        left = self.operations.get(token)
        if left is None:
            raise SdkLocalError("UNKNOWN_OPERATION", "no such operation", {})
        session_id = token.removeprefix("tok_")
        if left > 1:
            self.operations[token] = left - 1
            return OperationResumption.parse(
                {
                    "operation": f"op_{session_id}",
                    "progress": {"done": self.grade_steps - left + 1, "total": self.grade_steps},
                    "resumeAfterMs": 10,
                    "token": token,
                }
            )
        del self.operations[token]
        return self._grade(session_id)

    async def artifact(self, root: str, reader: str | None) -> dict[str, Any]:
        found = self.artifacts.get(root)
        if found is None:
            raise SdkLocalError("UNKNOWN_ARTIFACT", f"no artifact {root}", {"root": root})
        return found

    async def verify(self, grade: GradeResult, reader: str | None) -> VerificationReport:
        return VerificationReport(ok=True, grade=grade.root)


class MemorySecretStore:
    """An in-memory ``SecretStore`` for the secret tools' unit tests."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    @property
    def location(self) -> str:
        return "/acme/.kestrel/.env"

    def set(self, key: str, value: str) -> Any:
        from kestrel_protocol.ports import SecretWrite

        self.values[key] = value
        return SecretWrite(key=key, path=self.location)

    def unset(self, key: str) -> Any:
        from kestrel_protocol.ports import SecretWrite

        removed = self.values.pop(key, None) is not None
        return SecretWrite(key=key, path=self.location, removed=removed)

    def names(self) -> list[str]:
        return sorted(self.values)

    def reveal(self, key: str) -> str | None:
        return self.values.get(key)


def scripted(**options: Any) -> tuple[ScriptedTransport, AcmeScript]:
    """A transport answering with a fresh :class:`AcmeScript` (``options`` are its own)."""
    script = AcmeScript(**options)
    return ScriptedTransport(runs_on(script)), script
