"""A forward scenario's board follows its feed: sealed until ``kestrel-door feed unseal``
in another process, unsealed from the next request after (issue 48, session 18).

The door read which scenarios it seals once, at start: a feed frozen then stayed sealed
on its board after the operator unsealed it (``sealed`` in ``/board/proofs.json``, no
baseline), and with proofs of sealed scenarios now withheld, a proof published after the
unseal would have stayed off the board until the door restarted. While the feed is
sealed its proofs cannot be published at all (the board cannot replay them: the tape is
published nowhere). A door serves on 127.0.0.1 in its own process; the operator's verbs
run in this one.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result
from kestrel_door.board_page import BOARD_PATHS
from kestrel_door.cli import door_group
from kestrel_sdk.board import SEALED_ON_DOOR

from tests.doors import serve_door
from tests.forward_door import PREFIX, SCENARIO, bars, feed_token, forward_catalog
from tests.kestrel_sdk.board.proofs import door_proof, write

EDGE = 10
"""Bars on the tape when it is frozen: the prefix's three and seven appended."""
WHOLE = ("buy 3 ACME", "advance 2", "sell 3 ACME", "advance 100")
"""Alice's session: traded to the frozen tape's end."""


def _door(home: Path, *args: str) -> Result:
    return CliRunner().invoke(door_group, ["--home", str(home), *args])


def _board(url: str) -> list[httpx.Response]:
    return [httpx.get(url + path, timeout=60) for path in BOARD_PATHS]


def test_a_feed_unsealed_in_another_process_shows_its_proofs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(forward_catalog(tmp_path / "catalog")))
    with serve_door(tmp_path / "door", principal="alice") as door:
        operator = {"Authorization": f"Bearer {feed_token(door.home)}"}
        feed = f"{door.url}/v1/feeds/{SCENARIO}"
        csv = {**operator, "Content-Type": "text/csv"}
        appended = httpx.post(f"{feed}/bars", content=bars(PREFIX, EDGE), headers=csv)
        assert appended.status_code == 200, appended.text
        frozen = httpx.post(f"{feed}/freeze", headers=operator)
        assert frozen.status_code == 200, frozen.text
        proof = door_proof(door.url, door.token, SCENARIO, WHOLE)
        file = str(write(tmp_path / "a.json", proof))
        refused = _door(door.home, "board", "publish", file)
        sealed = _board(door.url)
        unsealed = _door(door.home, "feed", "unseal", SCENARIO)
        assert unsealed.exit_code == 0, unsealed.output
        published = _door(door.home, "board", "publish", file)
        assert published.exit_code == 0, published.output
        shown = _board(door.url)
    assert refused.exit_code != 0
    assert "forward tape unconfirmed" in refused.output
    assert sealed[2].json() == {"kind": "kestrel.board.proofs", "proofs": [], "sealed": [SCENARIO]}
    assert shown[2].json() == {
        "kind": "kestrel.board.proofs",
        "proofs": [{"agent": None, "proof": proof}],
        "sealed": [],
    }
    [row] = shown[1].json()["rows"]
    assert row["roots"]["proof"] == proof["root"]
    assert row["badge"] == "attested-and-sealed", row["reason"]
    [ranking] = shown[1].json()["scenarios"]
    assert ranking["baseline"]["why"] != SEALED_ON_DOOR  # the door no longer says sealed
