"""A PostgreSQL connection dropped in the middle of a transaction, on both ports alike.

The server ends the backend while the adapter's transaction waits on a row lock (an
administrator's ``pg_terminate_backend``, a failover, a restart): the call is refused as
``store unavailable`` (``BACKEND_UNAVAILABLE`` with ``retryAfter``, which every face
answers as an outage), nothing the cut transaction wrote is kept, and the next call
works on a fresh connection. And what would make the server cut one itself, a deadlock
between two replicas, does not arise.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from kestrel_door import open_door_store
from kestrel_protocol import KestrelError, RefusalCode, canonical_json, root_of
from kestrel_protocol.outage import RETRY_AFTER_S, STORE_UNAVAILABLE
from kestrel_protocol.store import OFFERS_KEPT, SessionRow
from kestrel_sdk.runtime.stores import open_runtime_store

VICTIM = "kestrel-victim"


def _victim(dsn: str) -> str:
    """``dsn`` with the application name the backends to end are found by."""
    return f"{dsn}&application_name={VICTIM}"


@contextmanager
def _row_locked(dsn: str, statement: str, args: tuple[Any, ...]) -> Iterator[None]:
    """Another client holding a row lock (``statement``) until the block ends."""
    with psycopg.connect(dsn) as blocker:
        blocker.execute(statement, args)
        try:
            yield
        finally:
            blocker.rollback()


def _cut_mid_transaction(dsn: str, call: Callable[[], object]) -> BaseException | None:
    """Run ``call`` on a thread until its transaction waits on a lock, end its backend,
    and return what ``call`` raised."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:  # handed to the test
            raised.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    with psycopg.connect(dsn, autocommit=True) as admin:
        deadline = time.monotonic() + 30
        while True:
            ended = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE application_name = %s AND wait_event_type = 'Lock'",
                (VICTIM,),
            ).fetchone()
            if ended is not None and ended[0] > 0:
                break
            assert worker.is_alive(), raised
            assert time.monotonic() < deadline, "the call never waited on the lock"
            time.sleep(0.02)
    worker.join(timeout=30)
    assert not worker.is_alive()
    return raised[0] if raised else None


def _assert_store_unavailable(raised: BaseException | None) -> None:
    assert isinstance(raised, KestrelError), repr(raised)
    assert (raised.code, raised.message) == (RefusalCode.BACKEND_UNAVAILABLE, STORE_UNAVAILABLE)
    assert raised.detail == {"retryAfter": RETRY_AFTER_S}
    assert "127.0.0.1" not in str(raised)  # a client is never told where the store is


def test_the_runtime_store_refuses_a_cut_transaction_and_keeps_none_of_it(
    postgres_dsn: str,
) -> None:
    store = open_runtime_store(_victim(postgres_dsn))
    try:
        root = "sha256:" + "a" * 64
        store.insert_session(SessionRow("ks_a", "alice", "acme", root, "1", "open", None, None))
        grade = {"kind": "grade", "score": "1.00"}
        grade_root = root_of(grade)
        with _row_locked(
            postgres_dsn, "SELECT 1 FROM kestrel_sessions WHERE id = %s FOR UPDATE", ("ks_a",)
        ):
            # set_grade stores the grade's bytes, then waits on the session row
            raised = _cut_mid_transaction(
                postgres_dsn,
                lambda: store.set_grade("ks_a", grade_root, canonical_json(grade)),
            )
        _assert_store_unavailable(raised)
        assert store.lookup(grade_root) == (None, "missing")
        session = store.session("ks_a")
        assert session is not None
        assert session.grade_root is None

        store.set_grade("ks_a", grade_root, canonical_json(grade))  # a fresh connection
        assert store.get(grade_root) == grade
    finally:
        store.close()


def test_the_door_records_refuse_a_cut_payment_and_the_voucher_stays_unspent(
    postgres_dsn: str,
) -> None:
    records = open_door_store(_victim(postgres_dsn))
    day, used_at = "2026-11-01", "2026-11-01T09:30:00Z"
    try:
        assert not records.count_open_or_offer("alice", day, 0, ("off_1", "acme", 100.0))

        def pay() -> str:
            return records.pay(
                "off_1",
                "alice",
                scenario="acme",
                voucher_id="v_1",
                now=50.0,
                used_at=used_at,
                day=day,
            )

        with _row_locked(
            postgres_dsn,
            "SELECT 1 FROM kestrel_door_offers WHERE offer_id = %s FOR UPDATE",
            ("off_1",),
        ):
            raised = _cut_mid_transaction(postgres_dsn, pay)
        _assert_store_unavailable(raised)
        assert pay() == "paid"  # the cut payment spent neither the offer nor the voucher
    finally:
        records.close()


@pytest.mark.parametrize("port", ["runtime", "door"])
def test_a_connection_the_server_ended_between_calls_is_replaced_unseen(
    postgres_dsn: str, port: str
) -> None:
    """An idle pooled connection ended by the server is not handed to the next call."""
    store: Any = (open_runtime_store if port == "runtime" else open_door_store)(
        _victim(postgres_dsn)
    )
    try:
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            ended = admin.execute(  # and wait (5 s at most) until each has ended
                "SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity"
                " WHERE application_name = %s",
                (VICTIM,),
            ).fetchone()
        assert ended is not None
        assert ended[0] >= 1
        if port == "runtime":
            assert store.put({"kind": "x"}) == root_of({"kind": "x"})
        else:
            store.grant_approval("alice", "kestrel_submit", "2026-11-01T09:30:00Z")
            assert store.take_approval("alice", "kestrel_submit")
    finally:
        store.close()


def _waiting_on_a_lock(dsn: str, application: str) -> None:
    """Return once a backend named ``application`` waits on a lock."""
    with psycopg.connect(dsn, autocommit=True) as admin:
        deadline = time.monotonic() + 30
        while not admin.execute(
            "SELECT 1 FROM pg_stat_activity WHERE application_name = %s"
            " AND wait_event_type = 'Lock'",
            (application,),
        ).fetchone():
            assert time.monotonic() < deadline, f"{application} never waited on a lock"
            time.sleep(0.02)


def test_a_payment_and_a_refused_open_racing_on_two_replicas_never_deadlock(
    postgres_dsn: str,
) -> None:
    """One replica pays a principal's oldest offer while another refuses the principal an
    open (counting the day, recording an offer, trimming the oldest ones): both answer,
    neither is cut as ``store unavailable`` by the server's deadlock detection."""
    day = "2026-11-01"
    paying = open_door_store(f"{postgres_dsn}&application_name=kestrel-paying")
    opening = open_door_store(f"{postgres_dsn}&application_name=kestrel-opening")
    results: dict[str, object] = {}

    def run(name: str, call: Callable[[], object]) -> threading.Thread:
        def target() -> None:
            try:
                results[name] = call()
            except BaseException as exc:  # handed to the test
                results[name] = exc

        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        return thread

    try:
        for n in range(OFFERS_KEPT):  # the principal's offers: off_0 is the oldest
            offer = (f"off_{n}", "acme", 100.0 + n)
            assert not opening.count_open_or_offer("alice", day, 0, offer)
        with psycopg.connect(postgres_dsn) as held:  # holds the new offer's id a moment
            held.execute("INSERT INTO kestrel_door_offers VALUES ('off_new', 'alice', 'acme', 999)")
            refused = run(
                "open",
                lambda: opening.count_open_or_offer("alice", day, 0, ("off_new", "acme", 999.0)),
            )
            _waiting_on_a_lock(postgres_dsn, "kestrel-opening")  # the day counted, not done
            paid = run(
                "pay",
                lambda: paying.pay(
                    "off_0",
                    "alice",
                    scenario="acme",
                    voucher_id="v_0",
                    now=50.0,
                    used_at=f"{day}T09:30:00Z",
                    day=day,
                ),
            )
            _waiting_on_a_lock(postgres_dsn, "kestrel-paying")
            held.rollback()
        refused.join(timeout=30)
        paid.join(timeout=30)
        assert results["open"] is False, results
        # the open trimmed the oldest offer first, or the payment took it first
        assert results["pay"] in ("no-offer", "paid"), results
    finally:
        paying.close()
        opening.close()
