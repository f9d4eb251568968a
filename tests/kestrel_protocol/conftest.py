"""Realistic instances of every protocol object kind, shared by the protocol tests.

A test that takes a ``sample`` argument runs once per kind (``pytest_generate_tests``
below). A kind not built here is built from the example its class declares
(``model_config = ConfigDict(json_schema_extra={"examples": [...]})``), so a new object
needs no edit here; one with neither fails ``test_every_protocol_object_kind_is_covered``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import kestrel_protocol
import pytest
from kestrel_protocol import (
    PAYLOAD_TYPE,
    AccountState,
    AccountTerms,
    Artifact,
    AttestedTrial,
    Blotter,
    BlotterFill,
    BlotterOrder,
    Catalog,
    CatalogScenario,
    Clock,
    Conformance,
    ConformanceCheck,
    Delivery,
    Diagnostic,
    EmbeddedScenario,
    Envelope,
    EnvelopeSignature,
    FeeTerms,
    FillTerms,
    ForwardInfo,
    FrameBar,
    FrameEvent,
    FrameOrder,
    GradeResult,
    History,
    HistoryBar,
    Instrument,
    Lookahead,
    LookaheadRead,
    Metrics,
    Mismatch,
    NewsItem,
    NewsPage,
    Offer,
    OperationProgress,
    OperationResumption,
    OrderForm,
    Payment,
    Pentad,
    PentadBody,
    Position,
    Proof,
    ProofScenario,
    ProtocolModel,
    Provenance,
    Scenario,
    ScenarioRef,
    SealedScenario,
    SelfRooted,
    SessionFrame,
    SessionList,
    SessionListEntry,
    SessionOpened,
    SessionRecord,
    SessionResponse,
    StandDown,
    StatementKind,
    TapeInfo,
    TapeText,
    ValidationReport,
    VerificationReport,
    root_of_bytes,
)

TAPE_CSV = (
    b"time,symbol,open,high,low,close,volume\n2015-01-02,ACME,100.00,101.50,99.25,101.20,120000\n"
)


def build_samples() -> list[ProtocolModel]:
    """One realistic instance of each kind, roots consistent across objects."""
    order_form = OrderForm(
        form="target-weight",
        syntax="(buy|sell) SYMBOL to PERCENT",
        example="buy ACME to 10%",
        summary="Trade to a weight of equity.",
    )
    statement_kinds = [
        StatementKind(
            kind="order",
            syntax="buy|sell QTY SYMBOL [limit P] [stop P] [tif day|gtc|ioc] [as ALIAS]",
            example="buy 10 ACME limit 101.25 tif gtc as entry",
            summary="Place an order.",
            forms=[order_form],
        ),
        StatementKind(
            kind="cancel", syntax="cancel ID|ALIAS", example="cancel entry", summary="Cancel."
        ),
        StatementKind(
            kind="advance", syntax="advance N", example="advance 5", summary="Move the clock."
        ),
        StatementKind(
            kind="stand-down",
            syntax="stand-down REASON",
            example='stand-down "done for the day"',
            summary="Stop trading; the session stays readable.",
        ),
    ]
    instrument = Instrument(symbol="ACME", tick="0.01", lot=1)
    tape = TapeInfo(
        interval="1d",
        bars=2520,
        start="2015-01-02T21:00:00Z",
        end="2024-12-31T21:00:00Z",
        bars_per_year=252,
        root=root_of_bytes(TAPE_CSV),
    )
    account_terms = AccountTerms(
        cash="100000.00", shortable=True, max_position=1000, max_drawdown="0.25"
    )
    fees = FeeTerms(bps="1.5", minimum="1.00")
    fill = FillTerms(participation="0.1", slippage_bps="2")
    forward = ForwardInfo(bars=0, head=root_of_bytes(b"time,symbol,open,high,low,close,volume\n"))
    scenario = Scenario.with_root(
        id="acme-daily",
        title="ACME, ten years of daily bars",
        description="A single liquid stock through two drawdowns — «ça va».",
        instruments=[instrument],
        tape=tape,
        account=account_terms,
        fees=fees,
        fill=fill,
    )
    catalog_entry = CatalogScenario(
        id=scenario.id,
        title=scenario.title,
        symbols=["ACME"],
        interval="1d",
        bars=2520,
        root=scenario.root,
        tape_root=scenario.tape.root,
        sealed=False,
    )
    catalog = Catalog.with_root(scenarios=[catalog_entry], statement_kinds=statement_kinds)
    diagnostic = Diagnostic(
        line=2, column=9, code="K102", severity="error", message="unknown symbol 'ACMR'"
    )
    report = ValidationReport(ok=False, statements=3, diagnostics=[diagnostic])
    scenario_ref = ScenarioRef(id=scenario.id, root=scenario.root)
    clock = Clock(bar=1, time="2015-01-05T21:00:00Z", remaining=2518)
    account_state = AccountState(
        cash="98988.00",
        equity="100000.50",
        realized="0.00",
        unrealized="1.50",
        fees="1.00",
        peak="100000.50",
        drawdown="0",
    )
    position = Position(symbol="ACME", qty=10, avg_price="101.10", unrealized="1.50")
    frame_order = FrameOrder(
        id="o2",
        alias="exit",
        side="sell",
        qty=10,
        filled=0,
        symbol="ACME",
        type="limit",
        limit="105.00",
        stop=None,
        tif="gtc",
        status="new",
    )
    accepted = FrameEvent(type="accepted", order="o2", bar=1)
    fill_event = FrameEvent(type="fill", order="o1", bar=1, qty=10, price="101.10", fee="1.00")
    frame_bar = FrameBar(open="100.50", high="101.75", low="100.25", close="101.25", volume=120000)
    frame = SessionFrame(
        session="ks_1f2e3d4c",
        seq=1,
        scenario=scenario_ref,
        clock=clock,
        status="open",
        marks={"ACME": "101.25"},
        bars={"ACME": frame_bar},
        account=account_state,
        positions=[position],
        orders=[frame_order],
        events=[fill_event, accepted],
    )
    delivery = Delivery.of(frame)
    news_item = NewsItem(
        id="n3",
        time="2015-01-05T14:30:00Z",
        symbol="ACME",
        headline="ACME beats — «ça va»",
        body="Quarterly earnings above the consensus.",
        truncated=None,
    )
    news_page = NewsPage(
        session=frame.session,
        scenario=scenario_ref,
        clock=clock,
        items=[news_item],
        next_before="n3",
    )
    body = PentadBody(bytes="buy 10 ACME\nsell 10 ACME limit 105.00 tif gtc as exit\n")
    pentad = Pentad.with_root(session="ks_1f2e3d4c", seq=1, prev="sha256:" + "0" * 64, body=body)
    stand_down = StandDown(reason="statement", detail="done for the day")
    response = SessionResponse(
        disposition="stood-down", pentad=pentad, delivery=delivery, stand_down=stand_down
    )
    offer = Offer.with_root(
        offer_id="of_9a8b",
        scenario=scenario.id,
        amount="0.50",
        currency="USD",
        description="One more session on acme-daily today.",
        expires_at="2026-11-30T06:00:00Z",
        accepts=["voucher"],
    )
    payment = Payment(offer_id=offer.offer_id, voucher="v_5c6d7e")
    opened = SessionOpened(gated=True, payment=offer)
    blotter_order = BlotterOrder(
        id="o1",
        alias=None,
        seq=1,
        line=1,
        side="buy",
        qty=10,
        symbol="ACME",
        type="market",
        limit=None,
        stop=None,
        tif="day",
        status="filled",
        filled=10,
        avg_price="101.10",
        submitted_bar=0,
        closed_bar=1,
        reason=None,
    )
    blotter_fill = BlotterFill(
        id="f1", order="o1", bar=1, time=clock.time, qty=10, price="101.10", fee="1.00"
    )
    blotter = Blotter.with_root(session=frame.session, orders=[blotter_order], fills=[blotter_fill])
    lookahead_read = LookaheadRead(seq=1, bar=1, read="tape acme-trend")
    lookahead = Lookahead(sealed=False, reads=[lookahead_read])
    record = SessionRecord.with_root(
        session=frame.session,
        scenario=scenario_ref,
        label="first try",
        pentads=[pentad.root],
        head=delivery.frame_root,
        blotter_root=blotter.root,
        lookahead=lookahead,
    )
    history_bar = HistoryBar(
        time=clock.time,
        symbol="ACME",
        open="100.50",
        high="101.75",
        low="100.25",
        close="101.25",
        volume=120000,
    )
    history = History(
        session=frame.session, scenario=scenario_ref, clock=clock, symbol=None, bars=[history_bar]
    )
    session_entry = SessionListEntry(
        session=frame.session,
        scenario=scenario_ref,
        label="first try",
        status="closed",
        clock=clock,
        grade="sha256:" + "5" * 64,
    )
    session_list = SessionList(sessions=[session_entry], next_cursor="o100")
    sealed_scenario = SealedScenario.of(scenario)
    metrics = Metrics(
        pnl="0.50",
        return_="0.00000500",
        max_drawdown="0.00000000",
        sharpe="1.23456789",
        fills=1,
        fees="1.00",
        exposure="1.00000000",
        turnover="0.01011000",
        sortino=None,
        calmar=None,
        buy_and_hold="0.01200000",
        trades=1,
        win_rate="1.00000000",
        best_trade="0.00049456",
        worst_trade="0.00049456",
        avg_trade="0.00049456",
        profit_factor=None,
        expectancy="0.00049456",
    )
    checks = [
        ConformanceCheck(id="chain-intact", passed=True, detail="1 pentad replayed"),
        ConformanceCheck(id="within-position-limits", passed=True, detail="max 10 of 1000"),
        ConformanceCheck(id="flat-at-end", passed=False, detail="ACME 10 open at close"),
        ConformanceCheck(id="no-statement-after-stand-down", passed=True, detail="ok"),
    ]
    conformance = Conformance.with_root(checks=checks)
    grade = GradeResult.with_root(
        session=frame.session,
        scenario=scenario_ref,
        record=record.root,
        head=record.head,
        metrics=metrics,
        conformance=conformance,
        passed=False,
    )
    progress = OperationProgress(done=1, total=4)
    resumption = OperationResumption(
        operation="op_77", progress=progress, resume_after_ms=250, token="tok_abc"
    )
    mismatch = Mismatch(field="head", expected=record.head, found="sha256:" + "1" * 64)
    proof_scenario = ProofScenario(id=scenario.id, root=scenario.root, tape_root=tape.root)
    embedded = EmbeddedScenario(scenario=scenario, tape="time,symbol,open,high,low,close,volume\n")
    proof = Proof.with_root(
        scenario=proof_scenario,
        grade=grade,
        record=record,
        head=frame,
        pentads=[pentad],
        blotter=blotter,
        embedded=embedded,
    )
    verification = VerificationReport(
        ok=False, grade=grade.root, proof=proof.root, mismatch=mismatch
    )
    trial = AttestedTrial(of="p_" + "0" * 32, number=3, minted=10)
    provenance = Provenance(source="embedded", detail="scenario t sha256:… unknown here")
    signature = EnvelopeSignature(keyid="kid-1", sig="c2ln")
    envelope = Envelope(payload_type=PAYLOAD_TYPE, payload="e30=", signatures=[signature])
    return [
        statement_kinds[0],
        trial,
        order_form,
        catalog_entry,
        catalog,
        instrument,
        tape,
        account_terms,
        fees,
        fill,
        forward,
        scenario,
        diagnostic,
        report,
        scenario_ref,
        clock,
        account_state,
        position,
        frame_order,
        fill_event,
        frame_bar,
        frame,
        delivery,
        news_item,
        news_page,
        body,
        pentad,
        stand_down,
        response,
        offer,
        payment,
        opened,
        blotter_order,
        blotter_fill,
        blotter,
        lookahead_read,
        lookahead,
        record,
        history_bar,
        history,
        session_entry,
        session_list,
        sealed_scenario.tape,
        sealed_scenario,
        metrics,
        checks[2],
        conformance,
        grade,
        progress,
        resumption,
        mismatch,
        provenance,
        signature,
        envelope,
        proof_scenario,
        embedded,
        proof,
        verification,
        TapeText(scenario=scenario.id, text=TAPE_CSV.decode()),
        Artifact.parse(pentad.to_json()),
    ]


def object_kinds() -> list[type[ProtocolModel]]:
    """Every protocol object kind ``kestrel_protocol`` exports from ``kestrel_protocol.objects``."""
    found = [getattr(kestrel_protocol, name) for name in kestrel_protocol.__all__]
    return [
        kind
        for kind in found
        if isinstance(kind, type)
        and issubclass(kind, ProtocolModel)
        and kind.__module__.startswith("kestrel_protocol.objects.")
    ]


def declared_samples(built: list[ProtocolModel]) -> list[ProtocolModel]:
    """An instance of each kind ``built`` lacks, from its class's first declared example."""
    have = {type(sample) for sample in built}
    extra = [k for k in object_kinds() if k not in have]
    return [
        k.model_validate(k.model_json_schema()["examples"][0])
        for k in extra
        if k.model_json_schema().get("examples")
    ]


SAMPLES = build_samples()
SAMPLES += declared_samples(SAMPLES)

M = TypeVar("M", bound=ProtocolModel)


def decimal_members(sample: ProtocolModel) -> list[str]:
    """The wire names of ``sample``'s top-level decimal-string members that hold a value."""
    return [
        field.alias or name
        for name, field in type(sample).model_fields.items()
        if "_check_decimal" in repr(field.annotation) + repr(field.metadata)
        and getattr(sample, name) is not None
    ]


DECIMAL_CASES = [(s, m) for s in SAMPLES for m in decimal_members(s)]
ROOTED = [s for s in SAMPLES if isinstance(s, SelfRooted)]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``sample``: every kind; ``rooted``: every self-rooted kind; ``decimal_case``:
    every (kind, decimal member) pair."""
    if "sample" in metafunc.fixturenames:
        metafunc.parametrize("sample", SAMPLES, ids=[type(s).__name__ for s in SAMPLES])
    if "rooted" in metafunc.fixturenames:
        metafunc.parametrize("rooted", ROOTED, ids=[type(s).__name__ for s in ROOTED])
    if "decimal_case" in metafunc.fixturenames:
        metafunc.parametrize(
            "decimal_case",
            DECIMAL_CASES,
            ids=[f"{type(s).__name__}.{m}" for s, m in DECIMAL_CASES],
        )


@pytest.fixture
def kinds() -> list[type[ProtocolModel]]:
    """Every protocol object kind (for coverage checks)."""
    return object_kinds()


@pytest.fixture
def samples() -> list[ProtocolModel]:
    """All samples at once (for coverage checks)."""
    return list(SAMPLES)


@pytest.fixture
def decimal_cases() -> list[tuple[ProtocolModel, str]]:
    """Every (sample, decimal member) pair the decimal tests run on."""
    return list(DECIMAL_CASES)


@pytest.fixture
def sample_of() -> Callable[[type[M]], M]:
    """The sample of one kind, e.g. ``sample_of(SessionFrame)``."""

    def pick(cls: type[M]) -> M:
        return next(s for s in SAMPLES if isinstance(s, cls))

    return pick
