"""A forward row shows when its window started though its proof embeds no tape (issue 48,
session 17).

A proof made while its forward scenario was sealed embeds no tape, and a verifier's
catalog holds the declared prefix alone: the board looked the first bar a forward
decision traded into up there, found nothing past the prefix, and showed the window's
start as "?". Under ``--trust`` the tape is fetched from the door (its bars up to the
signed edge, their root the signed one) to replay the proof; the row now reads the start
from that tape. The door signs as a door does (:class:`~kestrel_door.attest.Attestor`)
and serves its tape to the verifier through an httpx transport in the test's process.
"""

from __future__ import annotations

from pathlib import Path

import httpx
from kestrel_door import DoorStore
from kestrel_door.keys import DoorKeys
from kestrel_protocol.surface import FEED_TAPE_PATH
from kestrel_sdk.board import BoardCatalog, Entry, check_entry
from kestrel_sdk.forward_edge import bar_times
from kestrel_sdk.published_tape import PublishedTapes

from tests.kestrel_sdk.board.forward_proofs import door_signed_proof, forward_runtime
from tests.kestrel_sdk.runtime.forward.scenarios import SCENARIO_ID

TRADES = ("advance 2", "buy 3 ACME\nadvance 1", "sell 3 ACME\nadvance 6")
"""Three submissions, the first bar each trades into 2, 3 and 4: bars after the two of
the prefix, each published (at ``forward_proofs.AT``) after the decision: three forward
decisions."""


def test_a_tapeless_forward_row_shows_its_window_start_from_the_fetched_tape(
    tmp_path: Path,
) -> None:
    runtime = forward_runtime(tmp_path)  # its catalog at tmp_path / "catalog"
    try:
        keys = DoorKeys(DoorStore(tmp_path / "door.db"))
        proof = door_signed_proof(runtime, keys, TRADES, unseal=False)  # signed while sealed
        runtime.unseal_feed(SCENARIO_ID)
        tape = runtime.published_tape(SCENARIO_ID)
    finally:
        runtime.shutdown()
    assert "embedded" not in proof
    path = FEED_TAPE_PATH.format(id=SCENARIO_ID)

    def door(request: httpx.Request) -> httpx.Response:
        if request.url.path != path:
            return httpx.Response(404)
        return httpx.Response(200, text=tape, headers={"Content-Type": "text/csv"})

    entry = Entry("alice.json", "alice", data=proof)
    with httpx.Client(transport=httpx.MockTransport(door)) as client:
        row = check_entry(
            entry,
            trusted_keys=keys.jwks(),
            catalog=BoardCatalog([tmp_path / "catalog"]),
            tapes=PublishedTapes(client),
        )
    assert row.attested, row.reason
    assert row.badge != "failed", row.reason
    assert "unconfirmed" not in row.reason, row.reason
    times = bar_times(tape)
    assert row.forward is not None, row.reason
    assert (row.forward.first, row.forward.last) == (times[2], times[9])
    assert row.forward.decisions == 3
    assert f"forward window {times[2]} to {times[9]}, 3 decision(s)" in row.reason
