"""A sealed scenario's root does not give up its tape's length and end (issue 48 review).

A sealed scenario is served without its tape's end and length, but its root (listed in
the catalog, served in its sealed view and bound into every frame) is the root of the
whole scenario, both included. An agent knows every other member: the sealed view
serves them, and the descriptions Kestrel writes for a sealed scenario were public
text, ``Sealed daily bars of ZQX.`` for ``kestrel scenario new --sealed`` (the way
docs/evaluation.md publishes one) and a fixed neutral line for a renamed copy
(``--seal SRC=tape-9``). Trying lengths and end dates against the root then found both
in a tenth of a second. The adversary here does exactly that with what the SDK serves
it; the descriptions now end with a salt of the tape (``seal_salt``), and it finds
nothing. The control: the same search recovers a scenario sealed with ``--seal ID``
whose description is public (the docs say so), so the search is the one that works.
"""

from __future__ import annotations

import hashlib
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from kestrel_protocol import canonical_json
from kestrel_sdk import create_sdk, local_transport
from kestrel_sdk.cli import cli
from kestrel_sdk.runtime.catalog import load_catalog, tape_csv
from kestrel_sdk.runtime.catalog.renamed import NEUTRAL_DESCRIPTION
from kestrel_sdk.runtime.catalog.seal_salt import salted_description
from kestrel_sdk.scenarios import disguise_scenario

pytestmark = pytest.mark.anyio

BARS = 321


def _bars_file(path: Path) -> Path:
    """``BARS`` weekday bars of ZQX from 2015-03-02 (a tape nobody else has)."""
    rows = ["Date,Open,High,Low,Close,Volume"]
    day, price, made = date(2015, 3, 2), 5000, 0
    while made < BARS:
        if day.weekday() < 5:
            close = price + (made * 37 % 23) - 11
            high, low = max(price, close) + 7, min(price, close) - 7
            rows.append(
                f"{day},{price / 100:.2f},{high / 100:.2f},{low / 100:.2f},{close / 100:.2f},"
                f"{1000 + made * 13 % 900}"
            )
            price, made = close, made + 1
        day += timedelta(days=1)
    path.write_text("\n".join(rows) + "\n", "utf-8")
    return path


def _sealed_import(tmp_path: Path) -> Path:
    """A catalog holding ``zqx-1``, written as docs/evaluation.md says to publish a
    sealed scenario: ``kestrel scenario new ID --from FILE --sealed``."""
    catalog = tmp_path / "catalog"
    made = CliRunner().invoke(
        cli,
        [
            "scenario",
            "new",
            "zqx-1",
            "--from",
            str(_bars_file(tmp_path / "ZQX.csv")),
            "--sealed",
            "--out",
            str(catalog / "zqx-1"),
        ],
    )
    assert made.exit_code == 0, made.output
    return catalog


def _search(
    seen: dict[str, Any], description: str, title: str | None = None
) -> tuple[int, str] | None:
    """The (length, end) whose full scenario has the root the sealed view serves, tried
    for every length up to 4,000 bars and every weekday within 20 days of where a
    weekday tape of that length ends; ``None`` when none has it. ``title``: the one the
    root binds, when the view serves another."""
    full = {k: v for k, v in seen.items() if k not in ("kind", "sealed", "root")}
    full |= {"kind": "kestrel.scenario", "description": description}
    full["title"] = title or full["title"]
    full["tape"] = {**full["tape"], "bars": 999_999_999, "end": "END"}
    text = canonical_json(full).decode("utf-8")
    before, rest = text.split("999999999")
    middle, after = rest.split('"END"')
    start = datetime.strptime(seen["tape"]["start"], "%Y-%m-%dT%H:%M:%SZ")
    for bars in range(1, 4000):
        first = start + timedelta(days=(bars - 1) * 7 // 5 - 20)
        for offset in range(41):
            end = first + timedelta(days=offset)
            if end.weekday() >= 5:
                continue
            tried = f'{before}{bars}{middle}"{end:%Y-%m-%dT%H:%M:%SZ}"{after}'
            if "sha256:" + hashlib.sha256(tried.encode("utf-8")).hexdigest() == seen["root"]:
                return bars, f"{end:%Y-%m-%dT%H:%M:%SZ}"
    return None


async def _served(tmp_path: Path, catalog: Path | None, seal: str, scenario: str) -> Any:
    """What an agent is served of ``scenario`` (its sealed view) and of the catalog."""
    sdk = create_sdk(
        local_transport(
            home=tmp_path / "home",
            catalog_paths=None if catalog is None else [catalog],
            sealed=[seal],
            principal="eve",
        )
    )
    try:
        seen = (await sdk.call("kestrel_scenario", scenario=scenario)).to_json()
        listed = (await sdk.call("kestrel_catalog")).to_json()
    finally:
        await sdk.aclose()
    [entry] = [e for e in listed["scenarios"] if e["id"] == scenario]
    assert seen["kind"] == "kestrel.sealed-scenario"
    assert entry["root"] == seen["root"]
    assert "bars" not in entry
    assert "bars" not in seen["tape"]
    assert "end" not in seen["tape"]
    return seen


async def test_a_sealed_imports_root_does_not_tell_its_length(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KESTREL_CATALOG_PATH", raising=False)
    catalog = _sealed_import(tmp_path)
    seen = await _served(tmp_path, catalog, "zqx-1", "zqx-1")
    # the description the import wrote before: the interval's word and the symbols
    assert _search(seen, "Sealed daily bars of ZQX.") is None
    # the salt is the tape's: anyone holding the tape (after unsealing) checks it
    loaded = load_catalog([catalog]).get("zqx-1")
    assert loaded is not None
    salted = salted_description("Sealed daily bars of ZQX.", tape_csv(loaded))
    assert loaded.scenario.description == salted
    assert _search(seen, salted) == (BARS, loaded.scenario.tape.end)


async def test_a_renamed_copys_root_does_not_tell_its_length(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KESTREL_CATALOG_PATH", raising=False)
    catalog = _sealed_import(tmp_path)
    seen = await _served(tmp_path, catalog, "zqx-1=tape-9", "tape-9")
    assert _search(seen, NEUTRAL_DESCRIPTION) is None


async def test_the_search_finds_a_sealed_scenario_whose_description_is_public(
    tmp_path: Path,
) -> None:
    """``--seal ID`` on a shipped scenario: its title and description are public
    (docs/evaluation.md says so), and the search recovers its length and end."""
    shipped = load_catalog([]).get("basket-20")
    assert shipped is not None
    seen = await _served(tmp_path, None, "basket-20", "basket-20")
    tape = shipped.scenario.tape
    found = _search(seen, shipped.scenario.description, shipped.scenario.title)
    assert found == (tape.bars, tape.end)


@pytest.mark.parametrize("sealed_by", ["scenario.toml", "door"])
async def test_a_sealed_disguises_root_does_not_tell_its_length(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sealed_by: str
) -> None:
    """A disguise's description was public text: its fixed line and the commitment, which
    the catalog entry lists (to pair it with its source after the reveal). Sealed
    (``kestrel scenario disguise --sealed``, or by the door: ``--seal tape-s1``), the
    search found its length and end from its root. Its description now ends with the
    salt of its tape too."""
    monkeypatch.delenv("KESTREL_CATALOG_PATH", raising=False)
    catalog = _sealed_import(tmp_path)
    source = load_catalog([catalog]).get("zqx-1")
    assert source is not None
    made = disguise_scenario(source, "tape-s1", bytes(range(32)), sealed=sealed_by != "door")
    made.write(catalog / "tape-s1")
    seen = await _served(tmp_path, catalog, "tape-s1", "tape-s1")
    commitment = made.reveal["commitment"]
    public = (
        "Real market bars in disguise: symbols, times and price levels are changed, returns "
        f"are kept. Commitment {commitment}; the reveal names the source after the evaluation."
    )
    assert _search(seen, public) is None
    loaded = load_catalog([catalog]).get("tape-s1")
    assert loaded is not None  # the salt is the disguised tape's: checked once it is out
    assert loaded.scenario.description == salted_description(public, tape_csv(loaded))
