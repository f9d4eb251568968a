"""The ``DoorRecords`` contract, run against SQLite and PostgreSQL alike."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kestrel_door import open_door_store
from kestrel_protocol.store import DoorRecords, TokenEntry
from kestrel_protocol.store_feed import Arrival

from tests.store.conftest import raw_sql

DIGEST = b"\x01" * 32


@pytest.fixture
def records(store_url: str) -> Iterator[DoorRecords]:
    opened = open_door_store(store_url)
    yield opened
    opened.close()


def test_the_adapter_is_the_port(records: DoorRecords) -> None:
    assert isinstance(records, DoorRecords)


def test_tokens_are_found_by_digest_until_revoked(records: DoorRecords) -> None:
    row = TokenEntry(
        "tk_1", "alice", "kestrel:read kestrel:trade", "ci", "2026-01-01T00:00:00Z", None
    )
    records.add_token(row, DIGEST)
    records.add_token(
        TokenEntry("tk_2", "bob", "kestrel:read", None, "2026-01-02T00:00:00Z", None), b"\x02" * 32
    )
    assert records.token_grant(DIGEST) == (
        DIGEST,
        "alice",
        "kestrel:read kestrel:trade",
        None,
        "tk_1",
        None,
    )
    assert records.token_grant(b"\x03" * 32) is None
    assert [t.id for t in records.tokens()] == ["tk_1", "tk_2"]
    assert records.tokens()[0] == row
    assert records.revoke_token("tk_1", "2026-01-03T00:00:00Z") == 0  # it minted none
    assert records.revoke_token("tk_1", "2026-01-04T00:00:00Z") is None  # already revoked
    assert records.revoke_token("tk_nope", "2026-01-04T00:00:00Z") is None
    assert records.token_grant(DIGEST) is None
    assert records.tokens()[0].revoked_at == "2026-01-03T00:00:00Z"
    with pytest.raises(Exception):  # noqa: B017, PT011 - each driver's own integrity error
        records.add_token(TokenEntry("tk_3", "eve", "kestrel:read", None, "x", None), DIGEST)


def test_audit_rows_are_appended_in_order_and_never_changed(
    records: DoorRecords, store_url: str
) -> None:
    for n in range(5):
        records.add_audit(
            time=f"t{n}",
            principal="alice" if n % 2 else "bob",
            venue="http",
            tool="kestrel_submit",
            digest=f"sha256:{n}",
            outcome="ok",
        )
    rows = records.audit(None, 3)
    assert [r.time for r in rows] == ["t2", "t3", "t4"]  # the newest, oldest first
    assert [r.time for r in records.audit("alice", 10)] == ["t1", "t3"]
    assert rows[0].seq < rows[1].seq < rows[2].seq
    raw = raw_sql(store_url, door=True)
    with pytest.raises(Exception, match="append-only"):
        raw("UPDATE {audit} SET outcome = 'forged'", ())
    with pytest.raises(Exception, match="append-only"):
        raw("DELETE FROM {audit}", ())
    assert len(records.audit(None, 10)) == 5


def test_the_quota_counts_free_opens_then_records_offers(records: DoorRecords) -> None:
    assert records.count_open_or_offer("alice", "2026-01-01", 2, ("of_1", "acme", 100.0))
    assert records.count_open_or_offer("alice", "2026-01-01", 2, ("of_2", "acme", 100.0))
    assert not records.count_open_or_offer("alice", "2026-01-01", 2, ("of_3", "acme", 100.0))
    assert records.count_open_or_offer("alice", "2026-01-02", 2, ("of_4", "acme", 100.0))
    assert records.count_open_or_offer("bob", "2026-01-01", 2, ("of_5", "acme", 100.0))

    # of_3 was recorded: it can be paid once, by alice, for acme, before it expires
    def pay(offer: str, who: str, voucher: str, scenario: str = "acme", now: float = 50.0) -> str:
        return records.pay(
            offer,
            who,
            scenario=scenario,
            voucher_id=voucher,
            now=now,
            used_at="t",
            day="2026-01-01",
        )

    assert pay("of_3", "bob", "vc_1") == "no-offer"
    assert pay("of_3", "alice", "vc_1", scenario="other") == "no-offer"
    assert pay("of_3", "alice", "vc_1", now=100.0) == "expired"
    assert pay("of_3", "alice", "vc_1") == "paid"
    assert pay("of_3", "alice", "vc_2") == "no-offer"  # spent with the open it paid for
    assert not records.count_open_or_offer("alice", "2026-01-01", 2, ("of_6", "acme", 100.0))
    assert pay("of_6", "alice", "vc_1") == "used"
    assert pay("of_6", "alice", "vc_2") == "paid"


def test_approvals_are_one_shot(records: DoorRecords) -> None:
    assert not records.take_approval("alice", "kestrel_grade")
    records.grant_approval("alice", "kestrel_grade", "t1")
    records.grant_approval("alice", "kestrel_grade", "t2")  # granting twice is one approval
    assert not records.take_approval("bob", "kestrel_grade")
    assert records.take_approval("alice", "kestrel_grade")
    assert not records.take_approval("alice", "kestrel_grade")


def test_records_survive_reopening(records: DoorRecords, store_url: str) -> None:
    records.add_token(TokenEntry("tk_1", "alice", "kestrel:read", None, "t", None), DIGEST)
    records.close()
    again = open_door_store(store_url)
    try:
        assert again.token_grant(DIGEST) == (DIGEST, "alice", "kestrel:read", None, "tk_1", None)
    finally:
        again.close()


def test_a_trials_token_keeps_the_only_scenarios_it_sees(records: DoorRecords) -> None:
    row = TokenEntry("tk_1", "ev/trial-a", "kestrel:read", None, "t", None, "goog tape-q7")
    records.add_token(row, DIGEST)
    assert records.token_grant(DIGEST) == (
        DIGEST,
        "ev/trial-a",
        "kestrel:read",
        "goog tape-q7",
        "tk_1",
        None,
    )
    assert records.tokens() == [row]


def _token(token_id: str, principal: str, parent: str | None = None) -> TokenEntry:
    return TokenEntry(token_id, principal, "kestrel:read", None, "t", None, None, parent)


def test_a_parents_trials_are_numbered_in_mint_order(records: DoorRecords) -> None:
    """1, 2, 3 per parent, with its token and the parent's count in one transaction; a
    trial minted again keeps its first number and counts no more; another parent counts
    from 1; a principal never minted has none."""
    minted = [
        records.add_trial_token(_token(f"tk_{n}", principal), bytes([n]) * 32, of)
        for n, (principal, of) in enumerate(
            [
                ("ev/trial-a", "ev"),
                ("ev/trial-b", "ev"),
                ("ox/trial-a", "ox"),
                ("ev/trial-a", "ev"),
                ("ev/trial-c", "ev"),
            ],
            start=1,
        )
    ]
    assert minted == [(1, 1), (2, 2), (1, 1), (1, 2), (3, 3)]  # (number, parent's count)
    assert [t.id for t in records.tokens()] == [f"tk_{n}" for n in range(1, 6)]
    assert records.token_grant(bytes([5]) * 32) is not None
    # each trial's number beside how many its parent has minted by now
    trials = ("ev/trial-a", "ev/trial-c", "ox/trial-a")
    standing = {p: records.trial_standing(p) for p in trials}
    assert standing == {"ev/trial-a": (1, 3), "ev/trial-c": (3, 3), "ox/trial-a": (1, 1)}
    assert records.trial_standing("ev/trial-z") is None
    assert records.trial_standing("ev") is None
    assert records.trial_counts() == {"ev": 3, "ox": 1}  # every parent's count, no other


def test_a_store_made_before_trials_were_numbered_is_upgraded_in_place(
    records: DoorRecords, store_url: str
) -> None:
    """A door store of the schema before (PostgreSQL's door schema 4) opens upgraded: its
    trials kept, unnumbered; the parent's next trial is its first numbered one."""
    old = [_token("tk_ev", "ev"), _token("tk_a", "ev/trial-a", "tk_ev")]
    for n, row in enumerate(old):
        records.add_token(row, bytes([n + 1]) * 32)
    records.close()
    raw = raw_sql(store_url, door=True)
    prefix = "" if store_url.startswith("sqlite") else "kestrel_door_"
    raw(f"DROP TABLE {prefix}trials", ())
    raw(f"DROP TABLE {prefix}trial_counts", ())
    if not store_url.startswith("sqlite"):
        raw("UPDATE {meta} SET value = '4' WHERE key = 'door'", ())
    again = open_door_store(store_url)
    try:
        assert sorted(again.tokens(), key=lambda t: t.id) == sorted(old, key=lambda t: t.id)
        assert again.trial_standing("ev/trial-a") is None
        new = _token("tk_b", "ev/trial-b", "tk_ev")
        assert again.add_trial_token(new, b"\x03" * 32, "ev") == (1, 1)
        assert again.revoke_token("tk_ev", "t1") == 2
    finally:
        again.close()


def test_revoking_a_token_revokes_the_live_tokens_it_minted_at_once(
    records: DoorRecords,
) -> None:
    """One level: the parent's live trials go with it; another token's trials (the same
    principal's) and the operator's other tokens stay live; one already revoked is not
    counted again."""
    rows = [
        _token("tk_ev1", "ev"),
        _token("tk_ev2", "ev"),
        _token("tk_a", "ev/trial-a", "tk_ev1"),
        _token("tk_b", "ev/trial-b", "tk_ev1"),
        _token("tk_c", "ev/trial-c", "tk_ev1"),
        _token("tk_d", "ev/trial-d", "tk_ev2"),
    ]
    for n, row in enumerate(rows):
        records.add_token(row, bytes([n + 1]) * 32)
    assert sorted(records.tokens(), key=lambda t: t.id) == sorted(rows, key=lambda t: t.id)
    assert records.revoke_token("tk_c", "t1") == 0  # its run scored: DELETE /v1/trials
    assert records.revoke_token("tk_ev1", "t2") == 2
    revoked = {t.id: t.revoked_at for t in records.tokens()}
    assert revoked == {
        "tk_ev1": "t2",
        "tk_ev2": None,
        "tk_a": "t2",
        "tk_b": "t2",
        "tk_c": "t1",
        "tk_d": None,
    }
    assert [records.token_grant(bytes([n]) * 32) is None for n in range(1, 7)] == [
        True,
        False,
        True,
        True,
        True,
        False,
    ]
    assert records.revoke_token("tk_ev1", "t3") is None


def test_a_store_made_before_tokens_kept_scenarios_is_upgraded_in_place(
    records: DoorRecords, store_url: str
) -> None:
    """A door store of the schema before (no tokens.scenarios nor parent; PostgreSQL's door
    schema 1) opens upgraded, its tokens kept as they were (the whole catalog, no parent)."""
    records.add_token(TokenEntry("tk_1", "alice", "kestrel:read", None, "t", None), DIGEST)
    records.close()
    raw = raw_sql(store_url, door=True)
    raw("DROP INDEX IF EXISTS {tokens}_by_parent", ())  # nor the index on it
    raw("ALTER TABLE {tokens} DROP COLUMN expires_at", ())
    raw("ALTER TABLE {tokens} DROP COLUMN parent", ())
    raw("ALTER TABLE {tokens} DROP COLUMN scenarios", ())
    if not store_url.startswith("sqlite"):
        raw("UPDATE {meta} SET value = '1' WHERE key = 'door'", ())
    again = open_door_store(store_url)
    try:
        assert again.token_grant(DIGEST) == (DIGEST, "alice", "kestrel:read", None, "tk_1", None)
        trial = TokenEntry(
            "tk_2", "alice/trial-b", "kestrel:read", None, "t", None, "tape-q7", "tk_1"
        )
        again.add_token(trial, b"\x02" * 32)
        assert again.token_grant(b"\x02" * 32) == (
            b"\x02" * 32,
            "alice/trial-b",
            "kestrel:read",
            "tape-q7",
            "tk_2",
            None,
        )
        assert again.tokens()[1] == trial
    finally:
        again.close()
    reopened = open_door_store(store_url)  # upgraded once: opening again changes nothing
    try:
        assert [t.id for t in reopened.tokens()] == ["tk_1", "tk_2"]
    finally:
        reopened.close()


def test_a_store_made_before_tokens_kept_their_parent_is_upgraded_in_place(
    records: DoorRecords, store_url: str
) -> None:
    """A door store of this morning's schema (tokens.scenarios, no parent; PostgreSQL's
    door schema 2) opens upgraded: its rows kept, each with no parent (revoking the token
    that minted a trial of then leaves that trial live, as before), and a trial minted
    now goes with its parent."""
    old = [
        _token("tk_ev", "ev"),
        TokenEntry("tk_old", "ev/trial-a", "kestrel:read", None, "t", None, "tape-q7"),
    ]
    for n, row in enumerate(old):
        records.add_token(row, bytes([n + 1]) * 32)
    records.close()
    raw = raw_sql(store_url, door=True)
    raw("DROP INDEX IF EXISTS {tokens}_by_parent", ())  # nor the index on it
    raw("ALTER TABLE {tokens} DROP COLUMN expires_at", ())
    raw("ALTER TABLE {tokens} DROP COLUMN parent", ())
    if not store_url.startswith("sqlite"):
        raw("UPDATE {meta} SET value = '2' WHERE key = 'door'", ())
    again = open_door_store(store_url)
    try:
        assert again.tokens() == old
        again.add_token(_token("tk_new", "ev/trial-b", "tk_ev"), b"\x03" * 32)
        assert again.revoke_token("tk_ev", "t1") == 1
        revoked = {t.id: t.revoked_at for t in again.tokens()}
        assert revoked == {"tk_ev": "t1", "tk_old": None, "tk_new": "t1"}
    finally:
        again.close()


def test_a_store_made_before_tokens_expired_is_upgraded_in_place(
    records: DoorRecords, store_url: str
) -> None:
    """A door store of the schema before expiry (PostgreSQL's door schema 3) opens
    upgraded: its tokens kept, each never expiring (as they were issued), its trials still
    going with their parent; a token issued now keeps its expiry for the door to judge."""
    old = [_token("tk_1", "ev"), _token("tk_2", "ev/trial-a", "tk_1")]
    for n, row in enumerate(old):
        records.add_token(row, bytes([n + 1]) * 32)
    records.close()
    raw = raw_sql(store_url, door=True)
    raw("ALTER TABLE {tokens} DROP COLUMN expires_at", ())
    if not store_url.startswith("sqlite"):
        raw("UPDATE {meta} SET value = '3' WHERE key = 'door'", ())
    again = open_door_store(store_url)
    try:
        assert again.tokens() == old
        assert again.token_grant(b"\x02" * 32) == (
            b"\x02" * 32,
            "ev/trial-a",
            "kestrel:read",
            None,
            "tk_2",
            None,
        )
        new = TokenEntry(
            "tk_3", "ev", "kestrel:read", None, "t", None, None, None, "2027-01-31T00:00:00Z"
        )
        again.add_token(new, b"\x03" * 32)
        assert again.tokens()[-1] == new
        assert again.token_grant(b"\x03" * 32) == (
            b"\x03" * 32,
            "ev",
            "kestrel:read",
            None,
            "tk_3",
            "2027-01-31T00:00:00Z",
        )
        assert again.revoke_token("tk_1", "t1") == 1
    finally:
        again.close()
    if not store_url.startswith("sqlite"):  # a replica of schema 3 would take expired tokens
        import psycopg

        with psycopg.connect(store_url) as conn:
            found = conn.execute("SELECT value FROM kestrel_meta WHERE key = 'door'").fetchone()
        assert found == ("5",)


def _revoke_plan(store_url: str) -> str:
    """How the database finds the trials a revoked token minted (its query plan), with
    sequential scans priced out where the planner would choose one for a small table."""
    revoke = "UPDATE {t} SET revoked_at = 'x' WHERE parent = 'tk_ev' AND revoked_at IS NULL"
    if store_url.startswith("sqlite:///"):
        import sqlite3
        from pathlib import Path

        door = Path(store_url[len("sqlite:///") :]).parent / "door.db"
        with sqlite3.connect(door) as conn:
            plan = conn.execute("EXPLAIN QUERY PLAN " + revoke.format(t="tokens")).fetchall()
        conn.close()
        return " ".join(str(row[-1]) for row in plan)
    import psycopg

    with psycopg.connect(store_url) as pg:
        pg.execute("SET enable_seqscan = off")
        found = pg.execute("EXPLAIN " + revoke.format(t="kestrel_door_tokens")).fetchall()
        return " ".join(str(row[0]) for row in found)


def test_a_store_made_before_tokens_parent_was_indexed_is_upgraded_in_place(
    records: DoorRecords, store_url: str
) -> None:
    """A door store of the schema before the index on ``tokens.parent`` (revoking a token
    scanned the tokens for its trials) gains the index when a door opens it: every token
    kept, the revoke's cascade the same, found through the index."""
    rows = [_token("tk_ev", "ev"), _token("tk_a", "ev/trial-a", "tk_ev"), _token("tk_b", "b")]
    for n, row in enumerate(rows):
        records.add_token(row, bytes([n + 1]) * 32)
    records.close()
    raw_sql(store_url, door=True)("DROP INDEX IF EXISTS {tokens}_by_parent", ())
    assert "tokens_by_parent" not in _revoke_plan(store_url)  # as the store was: a scan
    again = open_door_store(store_url)
    try:
        assert "tokens_by_parent" in _revoke_plan(store_url)
        assert sorted(again.tokens(), key=lambda t: t.id) == sorted(rows, key=lambda t: t.id)
        assert again.revoke_token("tk_ev", "t1") == 1
        revoked = {t.id: t.revoked_at for t in again.tokens()}
        assert revoked == {"tk_ev": "t1", "tk_a": "t1", "tk_b": None}
    finally:
        again.close()


def test_signing_keys_are_kept_in_order_and_survive_reopening(
    records: DoorRecords, store_url: str
) -> None:
    assert records.signing_keys() == []
    records.add_signing_key("kid-b", b"\x02" * 32, "2026-01-02T00:00:00Z")
    records.add_signing_key("kid-a", b"\x01" * 32, "2026-01-01T00:00:00Z")
    records.close()
    again = open_door_store(store_url)  # another replica, or a restart
    try:
        assert again.signing_keys() == [
            ("kid-a", b"\x01" * 32, "2026-01-01T00:00:00Z"),
            ("kid-b", b"\x02" * 32, "2026-01-02T00:00:00Z"),
        ]
    finally:
        again.close()


def test_a_revoked_key_stays_stored_and_is_revoked_once(records: DoorRecords) -> None:
    records.add_signing_key("kid-a", b"\x01" * 32, "2026-01-01T00:00:00Z")
    assert not records.revoke_signing_key("kid-unknown", "2026-01-02T00:00:00Z")
    assert records.revoke_signing_key("kid-a", "2026-01-02T00:00:00Z")
    assert not records.revoke_signing_key("kid-a", "2026-01-03T00:00:00Z")  # once
    assert records.revoked_signing_keys() == {"kid-a": "2026-01-02T00:00:00Z"}
    assert [kid for kid, _, _ in records.signing_keys()] == ["kid-a"]  # nothing lost


def test_a_door_secret_is_the_first_one_stored(records: DoorRecords, store_url: str) -> None:
    assert records.door_secret("pseudonym", b"\x01" * 32, "t1") == b"\x01" * 32
    replica = open_door_store(store_url)  # a replica making its own finds the first
    try:
        assert replica.door_secret("pseudonym", b"\x02" * 32, "t2") == b"\x01" * 32
    finally:
        replica.close()
    assert records.door_secret("other", b"\x03" * 32, "t3") == b"\x03" * 32


def test_refused_opens_keep_only_a_principals_latest_offers(
    records: DoorRecords, store_url: str
) -> None:
    day = "2026-01-01"
    assert records.count_open_or_offer("bob", day, 0, ("of_bob", "acme", 1000.0)) is False
    for n in range(200):  # 200 refusals: the table does not grow with them
        offer = (f"of_{n:03d}", "acme", 100.0 + n)
        assert records.count_open_or_offer("alice", day, 0, offer) is False
    rows: list[str] = []
    if store_url.startswith("sqlite:///"):
        import sqlite3
        from pathlib import Path

        door = Path(store_url[len("sqlite:///") :]).parent / "door.db"
        with sqlite3.connect(door) as conn:
            rows = [r[0] for r in conn.execute("SELECT offer_id FROM offers ORDER BY offer_id")]
        conn.close()
    else:
        import psycopg

        with psycopg.connect(store_url) as pg:
            found = pg.execute("SELECT offer_id FROM kestrel_door_offers ORDER BY offer_id")
            rows = [r[0] for r in found]
    assert rows == [f"of_{n:03d}" for n in range(192, 200)] + ["of_bob"]  # OFFERS_KEPT = 8

    def pay(offer: str, voucher: str) -> str:
        return records.pay(
            offer, "alice", scenario="acme", voucher_id=voucher, now=50.0, used_at="t", day=day
        )

    assert pay("of_199", "vc_1") == "paid"  # the latest still pays
    assert pay("of_000", "vc_2") == "no-offer"  # an old one lapsed


def test_a_submission_s_arrival_is_kept_once_in_seq_order(store_url: str) -> None:
    """Replicas share the arrivals: what one door process notes, another reads; a second
    note of a seq keeps the first time."""
    one, two = open_door_store(store_url), open_door_store(store_url)
    try:
        one.add_arrival("ks_a", Arrival(2, "2026-12-06T10:00:01.000000Z", 2))
        two.add_arrival("ks_a", Arrival(1, "2026-12-06T10:00:00.000000Z", 1))
        two.add_arrival("ks_a", Arrival(2, "2026-12-06T11:00:00.000000Z", 9))  # kept: the first
        one.add_arrival("ks_b", Arrival(1, "2026-12-06T10:00:02.000000Z", 0))
        assert two.arrivals("ks_a") == [
            Arrival(1, "2026-12-06T10:00:00.000000Z", 1),
            Arrival(2, "2026-12-06T10:00:01.000000Z", 2),
        ]
        assert one.arrivals("ks_b") == [Arrival(1, "2026-12-06T10:00:02.000000Z", 0)]
        assert one.arrivals("ks_none") == []
    finally:
        one.close()
        two.close()
