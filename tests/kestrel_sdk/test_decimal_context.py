"""Kestrel's results do not depend on the caller's ``decimal`` context.

Kestrel runs in its caller's process (a notebook, the gym, an Inspect task), whose
``decimal`` context is theirs to set. Under each hostile context (few digits, traps on
inexact results, other roundings, tiny exponents, and a changed ``DefaultContext``,
which new threads and every ``Context(...)`` that leaves a member out copy), a fresh
process imports Kestrel, imports a crypto file as a scenario, plays sessions of every
scenario family (single symbol, basket, pairs, fractional lots, margin, news, sealed,
forward) with brackets, targets and trailing stops, grades and proves them, verifies
each proof, builds their ledgers and reports, runs gym episodes (one symbol, and a basket
by weights) and the board's statistics: every root, byte and number is the one the
default context gives.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from tests.kestrel_sdk.runtime.forward.scenarios import bars
from tests.kestrel_sdk.runtime.test_live_grade import AT, CASES, _catalog
from tests.news_catalog import NEWS_ID, write_news_scenario

MODES: dict[str, dict[str, Any]] = {
    "five digits": {"prec": 5},
    "traps on inexact, rounded, float": {"traps": ["Inexact", "Rounded", "FloatOperation"]},
    "round down": {"rounding": "ROUND_DOWN", "prec": 12},
    "round ceiling, nine digits": {"rounding": "ROUND_CEILING", "prec": 9},
    "tiny exponents": {"Emax": 6, "Emin": -6},
    "DefaultContext changed": {
        "default_context": True,
        "prec": 6,
        "rounding": "ROUND_FLOOR",
        "traps": ["Inexact", "Rounded"],
    },
}

_CRYPTO = "\n".join(
    ["time,open,high,low,close,volume"]
    + [
        f"2024-03-{day + 1:02d}T00:00:00Z,{42000 + day * 137.123457:.6f},"
        f"{42600 + day * 141.5:.6f},{41500 + day * 133.000001:.6f},"
        f"{42100 + day * 139.987654:.6f},{1000 + day * 7.25343589:.8f}"
        for day in range(28)
    ]
)

_PROGRAMS = {
    "acme-trend": [
        "buy 10 ACME limit 200.00 take 230.00 loss 90.00 tif gtc\nadvance 50",
        "buy 20 ACME\nadvance 5\nsell 20 ACME trail 1.5% tif gtc\nadvance 100",
        "buy ACME to 10%\nadvance 200",
    ],
    "basket-20": ["buy 7 ACRN\nbuy 3 BKLN\nadvance 30", "sell 1 ACRN\nadvance 30"],
    "pairs-kx": ["buy 30 KAPPA\nsell 20 XI\nadvance 70", "buy KAPPA to 5%\nadvance 30"],
    NEWS_ID: ["buy 12 ACME take 140.00 loss 95.00 tif gtc\nadvance 20", "sell 6 BETA\nadvance 9"],
    "btc": [
        "buy 0.5731 BTC take 46000.00 loss trail 3% tif gtc\nadvance 5",
        "buy BTC to 30%\nadvance 6",
        "sell 0.125 BTC limit 45000.00 tif gtc\nadvance 10",
    ],
}

_CHILD = r"""
import decimal, hashlib, json, sys
from pathlib import Path

spec = json.load(sys.stdin)
mode = spec["mode"]

def hostile(context):
    for name in ("prec", "Emax", "Emin"):
        if name in mode:
            setattr(context, name, mode[name])
    if "rounding" in mode:
        context.rounding = getattr(decimal, mode["rounding"])
    for name in mode.get("traps", []):
        context.traps[getattr(decimal, name)] = True

if mode.get("default_context"):
    hostile(decimal.DefaultContext)
    decimal.setcontext(decimal.Context())
hostile(decimal.getcontext())

import anyio
import numpy as np
from kestrel_sdk import create_sdk, local_transport
from kestrel_sdk.board.stats import eight_places, interval
from kestrel_sdk.gym import TradingEnv
from kestrel_sdk.report import render_report
from kestrel_sdk.report.collect import collect_report_data, grade_sources
from kestrel_sdk.results import ledger_of
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.scenarios import ScenarioTermsInput, scenario_from_file

work = Path(spec["work"])
catalog = Path(spec["catalog"])
out = {}

def digest(text):
    return hashlib.sha256(text.encode()).hexdigest()

crypto = work / "BTC.csv"
crypto.write_text(spec["crypto"], "utf-8")
margin = {
    "leverage": "2", "maintenance_margin": "0.25", "borrow_rate": "0.07", "cash_rate": "0.031"
}
terms = ScenarioTermsInput(lot="0.0001", shortable=True, fee_minimum="0.37", margin=margin)
imported = work / "imported"
scenario_from_file(crypto, "btc", terms=terms).write(imported / "btc")
out["imported"] = {
    path.name: hashlib.sha256(path.read_bytes()).hexdigest()
    for path in sorted((imported / "btc").iterdir())
}
catalogs = [catalog, imported]

for name, case in spec["cases"].items():
    runtime = Runtime(work / "homes" / name, catalogs, sealed=tuple(case["sealed"]))
    if case["forward"]:
        runtime.append_bars(case["scenario"], case["forward"].encode(), clock=lambda: spec["at"])
    sid = runtime.open_session("alice", case["scenario"], "decimal").session_id
    frames = [runtime.submit("alice", sid, source) and runtime.frame("alice", sid).text
              for source in case["sources"]]
    proof = runtime.proof("alice", sid, embed_tape=case["embed_tape"]).model()
    if case["forward"]:
        report = runtime.verify(proof.grade)
    else:
        report = Runtime(work / "strangers" / name, catalogs).verify_proof(proof.to_json())
    frame_root = hashlib.sha256("".join(frames).encode()).hexdigest()
    out[name] = [proof.grade.root, proof.root, frame_root, report.ok, report.mismatch]
    runtime.shutdown()

async def through_the_sdk():
    transport = local_transport(home=work / "sdk", store="memory:", catalog_paths=catalogs)
    async with create_sdk(transport) as sdk:
        for scenario, sources in spec["programs"].items():
            session = (await sdk.open_session(scenario)).session
            frames = [(await session.submit(source)).delivery.frame_root for source in sources]
            grade = await sdk.grade(session.id)
            proof = await sdk.proof(session.id)
            verified = await sdk.verify(grade)
            out["sdk " + scenario] = [grade.root, proof.root, frames, verified.ok]
            ledger = repr(ledger_of(await grade_sources(sdk, grade)))
            report = render_report(await collect_report_data(sdk, grade))
            out["ledger, report " + scenario] = [digest(ledger), digest(report)]

anyio.run(through_the_sdk)

def episodes(env, action):
    observations, rewards, grades = [], [], []
    env.reset(seed=7)
    for step in range(150):
        obs, reward, terminated, truncated, info = env.step(action(step))
        observations.append(obs.tobytes().hex())
        rewards.append(repr(reward))
        if terminated or truncated:
            grades.append(info["grade"].root)
            env.reset()
    env.close()
    return [digest("".join(observations)), rewards, grades]

single = TradingEnv("acme-chop", window=4, length=60, home=work / "gym", store="memory:")
out["gym"] = episodes(single, lambda step: step % 3 % single.action_space.n)
symbols = ["ACRN", "BKLN", "CLDY"]
basket = TradingEnv(
    "basket-20", symbols=symbols, action="weights", window=3, length=50,
    home=work / "gym-basket", store="memory:",
)
weights = [[0.5, 0.3, 0.2], [0.123456789, 0.7, 0.1], [1 / 3, 1 / 3, 1 / 3], [0.9, 0.6, 0.4]]
out["gym basket"] = episodes(basket, lambda step: np.array(weights[step % 4], dtype=np.float32))

values = [decimal.Decimal(text) for text in ("0.1234567", "-0.05", "0.2", "0.0333333333")]
stats = interval(values)
out["board stats"] = [str(stats.n), *map(eight_places, (stats.mean, stats.low, stats.high))]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The catalog every run reads (written once, in the default context) and the cases."""
    root = tmp_path_factory.mktemp("decimal")
    catalog = _catalog(root)
    write_news_scenario(catalog)
    cases = {
        name: {
            **asdict(case),
            "forward": bars(0, case.forward_bars).decode() if case.forward_bars else "",
        }
        for name, case in CASES.items()
    }
    for case in cases.values():
        del case["forward_bars"], case["options"]
    return {"root": root, "catalog": str(catalog), "cases": cases}


def _run(world: dict[str, Any], name: str, mode: dict[str, Any]) -> dict[str, Any]:
    work = Path(world["root"]) / name
    work.mkdir()
    spec = {
        "mode": mode,
        "work": str(work),
        "catalog": world["catalog"],
        "cases": world["cases"],
        "programs": _PROGRAMS,
        "crypto": _CRYPTO,
        "at": AT,
    }
    done = subprocess.run(
        [sys.executable, "-c", _CHILD],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


@pytest.fixture(scope="module")
def expected(world: dict[str, Any]) -> dict[str, Any]:
    """Everything the default context gives: each proof verifies."""
    result = _run(world, "default", {})
    for name in (*CASES, *(f"sdk {scenario}" for scenario in _PROGRAMS)):
        assert result[name][3] is True, (name, result[name])
    assert result["gym"][2], "the gym episode ended and was graded"
    return result


@pytest.mark.parametrize("mode", list(MODES))
def test_every_root_is_the_default_contexts_whatever_the_callers_context(
    mode: str, world: dict[str, Any], expected: dict[str, Any]
) -> None:
    got = _run(world, mode.replace(" ", "-").replace(",", ""), MODES[mode])
    assert got.keys() == expected.keys()
    for part, value in expected.items():
        assert got[part] == value, part
