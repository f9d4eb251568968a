"""``kestrel run --wait DURATION`` trades a forward scenario's window as its bars are
published: each submission waits for its bars (and is sent again) rather than stopping at
the tape's edge; without ``--wait``, or once DURATION has passed, the edge refuses the run
``BAR_NOT_PUBLISHED`` as before, the session left open."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from kestrel_sdk.cli import cli
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store
from kestrel_sdk.transports.feed_waiter import StoreFeedWaiter

from tests.kestrel_sdk.runtime.forward.scenarios import SCENARIO_ID, bars, forward_catalog

PROGRAM = 'buy 10 ACME as entry\nadvance 1\nadvance 2\nstand down "done"\n'
AT = "2026-12-01T14:40:00Z"


def _run(tmp_path: Path, *options: str) -> Result:
    program = tmp_path / "forward.kes"
    program.write_text(PROGRAM, encoding="utf-8")
    return CliRunner().invoke(
        cli,
        [
            "--home",
            str(tmp_path / "home"),
            "--catalog-path",
            str(tmp_path / "catalog"),
            "run",
            str(program),
            "--scenario",
            SCENARIO_ID,
            "--json",
            *options,
        ],
    )


def _append(tmp_path: Path, first: int, count: int) -> None:
    """Publish bars as the operator's feed does, through another runtime on the store."""
    store = open_runtime_store(f"sqlite:///{tmp_path / 'home' / 'kestrel.db'}")
    runtime = Runtime(tmp_path / "home", [tmp_path / "catalog"], store=store)
    runtime.append_bars(SCENARIO_ID, bars(first, count), clock=lambda: AT)


def test_run_waits_for_the_window_with_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    forward_catalog(tmp_path, prefix=1)  # bar 0 is published: the session opens on it
    waited: list[tuple[int, float]] = []
    plain_wait = StoreFeedWaiter.wait
    published = [1]

    def told(self: StoreFeedWaiter, scenario_id: str, bars_needed: int, seconds: float) -> bool:
        # the feed publishes the bars a wait needs once it has begun (an event, no sleep)
        waited.append((bars_needed, seconds))
        first, published[0] = published[0], bars_needed
        threading.Thread(target=_append, args=(tmp_path, first, bars_needed - first)).start()
        return plain_wait(self, scenario_id, bars_needed, seconds)

    monkeypatch.setattr(StoreFeedWaiter, "wait", told)
    done = _run(tmp_path, "--wait", "10m")
    assert done.exit_code == 0, done.output
    assert '"passed":true' in done.stdout
    # the first wait is the runtime's own (for bar 1); then bar 3 was still to come, and
    # the run sent its submission again, waiting once more
    assert [needed for needed, _ in waited] == [2, 4], waited
    assert all(0 < seconds <= 300 for _, seconds in waited)  # each submit's own bound


def test_without_wait_the_edge_refuses_the_run(tmp_path: Path) -> None:
    forward_catalog(tmp_path, prefix=1)
    refused = _run(tmp_path)
    assert refused.exit_code == 3
    assert "BAR_NOT_PUBLISHED: bar 1 is not published yet" in refused.stderr
    assert "left open; --wait DURATION waits for its bars)" in refused.stderr


def test_a_wait_that_runs_out_is_the_edge_s_refusal(tmp_path: Path) -> None:
    forward_catalog(tmp_path, prefix=1)
    refused = _run(tmp_path, "--wait", "200ms")
    assert refused.exit_code == 3
    assert "BAR_NOT_PUBLISHED: bar 1 is not published yet" in refused.stderr
    assert "left open; --wait ran out)" in refused.stderr


def test_wait_takes_a_duration(tmp_path: Path) -> None:
    forward_catalog(tmp_path, prefix=1)
    bad = _run(tmp_path, "--wait", "soon")
    assert bad.exit_code == 2
    assert "'soon' is not a duration such as 30s, 500ms, 10m or 2h" in bad.stderr
