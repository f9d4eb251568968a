"""What a disguised tape's clock tells: issue 48's session attacks, on real and shipped tapes.

For each source (backtesting.py's GOOG, EURUSD and BTCUSD; a US stock's 2019 hours,
``tests/exchange_hours.py``; every shipped scenario) it disguises the tape with one secret
and reads the source's and the disguise's sessions as an agent would (runs of bars with
no gap over six hours; the first and last, cut by the tape's ends, left out):

- ``opens``: the times of day sessions open at (two: summer and winter time);
- ``open days``: the weekday and time each session opens at (a weekday moved on by a
  closed holiday shows as another);
- ``breaks``: the gaps after a session of the usual count to the next, past whole days (an
  hour short or long at each change of summer time);
- ``early``: sessions closing before the usual time of day (half days);
- ``short``: sessions of fewer bars than the usual (half days, holiday weeks: still told);
- ``25h``: bar-to-bar gaps of 25 hours (EURUSD after Christmas, laid on open days);
- the disguised tape's root.

Run: ``uv run python benchmarks/disguise_sessions.py`` (a minute or two; minute-200k is
most of it). Run it with another tree's python (``/work/start/.venv/bin/python
benchmarks/disguise_sessions.py``) for that tree's figures: the readings are this file's.
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from datetime import datetime, timedelta
from itertools import pairwise
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1]))  # the tests' exchange hours, said once there

from kestrel_sdk.runtime.catalog import load_catalog  # noqa: E402
from kestrel_sdk.runtime.catalog.model import LoadedScenario  # noqa: E402
from kestrel_sdk.scenarios import disguise_scenario, scenario_from_file  # noqa: E402

from tests.exchange_hours import Session, read_sessions, write_exchange_bars  # noqa: E402

SECRET = bytes(range(32))


def _reading(times: tuple[str, ...]) -> dict[str, object]:
    sessions = read_sessions(times)
    inner = sessions[1:-1]
    usual = Counter(s.bars for s in sessions).most_common(1)[0][0]
    closes = Counter(s.closes.strftime("%H:%M") for s in inner if s.bars == usual)
    usual_close = closes.most_common(1)[0][0] if closes else None
    return {
        "sessions": len(sessions),
        "opens": dict(Counter(s.opens.strftime("%H:%M") for s in inner)),
        "open days": len(Counter(s.opens.strftime("%a %H:%M") for s in inner)),
        "breaks": _breaks(sessions, usual),
        "early": sum(s.closes.strftime("%H:%M") < (usual_close or "") for s in inner),
        "short": sum(s.bars < usual for s in inner),
        "25h": sum(
            b - a == timedelta(hours=25)
            for a, b in pairwise(
                datetime.fromisoformat(time.replace("Z", "+00:00")) for time in times
            )
        ),
    }


def _breaks(sessions: list[Session], usual: int) -> dict[str, int]:
    gaps = Counter(
        str((b.opens - a.closes) % timedelta(days=1))
        for a, b in pairwise(sessions)
        if a.bars == usual
    )
    return dict(gaps)


def _pair(source: LoadedScenario, directory: Path) -> LoadedScenario:
    disguise_scenario(source, "tape-z9", SECRET).write(directory / "tape-z9")
    twin = load_catalog([directory]).get("tape-z9")
    assert twin is not None
    return twin


def main() -> None:
    import backtesting.test  # type: ignore[import-untyped]

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for name in ("GOOG", "EURUSD", "BTCUSD"):
            path = Path(backtesting.test.__file__).with_name(f"{name}.csv")
            scenario_from_file(path, name.lower()).write(root / "in" / name.lower())
        bars = write_exchange_bars(root / "ACME.csv")
        scenario_from_file(bars, "stock-2019").write(root / "in" / "stock-2019")
        catalog = load_catalog([root / "in"])
        for scenario_id in catalog.ids():
            loaded = catalog.get(scenario_id)
            assert loaded is not None
            try:
                twin = _pair(loaded, root / "out" / loaded.id)
            except ValueError as refused:  # basket-20: its news names a year
                print(f"{loaded.id}: not disguised ({refused})")
                continue
            print(f"{loaded.id}: {len(loaded.tape.times)} bars")
            print(f"  source  : {_reading(loaded.tape.times)}")
            print(f"  disguise: {_reading(twin.tape.times)}")
            print(f"  disguised tape root {twin.scenario.tape.root}")


if __name__ == "__main__":
    main()
