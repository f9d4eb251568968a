"""Generate the six shipped scenarios into ``kestrel_sdk/catalog_data/<id>/``.

Run ``uv run python packages/kestrel-sdk/scripts/generate_catalog.py`` (optionally with an
output directory) and commit the result. The output is byte-stable on every machine:
the only randomness is a seeded Mersenne Twister used through ``getrandbits`` (integer
exact), prices evolve in integer micro-dollars (no floats, so no libm differences), and
the one gzip file is written with ``mtime=0`` and no file name. A test re-runs this
script and compares every byte of the tapes and scenario files.

Normal-looking noise is the centred popcount of 256 random bits (a binomial, standard
deviation 8), which is exact integer arithmetic.
"""

from __future__ import annotations

import argparse
import gzip
import io
from datetime import date
from pathlib import Path

from kestrel_sdk.scenarios.basket import INDEX, basket
from kestrel_sdk.scenarios.synthetic import (
    HEADER,
    MICRO,
    PPM,
    Bar,
    Noise,
    grow,
    make_bar,
    price_text,
    weekdays,
)

__all__ = ["SCENARIO_IDS", "generate", "main"]

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src" / "kestrel_sdk" / "catalog_data"
SCENARIO_IDS = ("acme-chop", "acme-crash", "acme-trend", "basket-20", "minute-200k", "pairs-kx")
BASKET_SIZE, BASKET_BARS = 20, 504

DAILY_BARS = 2520
MINUTE_BARS = 200_000
MINUTES_PER_DAY = 390  # 14:30 .. 20:59 UTC
CRASH_START, CRASH_DAYS = 1500, 25


def daily_times(count: int) -> list[str]:
    days = weekdays(date(2010, 1, 4))
    return [f"{next(days).isoformat()}T00:00:00Z" for _ in range(count)]


def daily_volume(noise: Noise, base: int) -> int:
    return max(1_000, base + noise.scaled(base * 3 // 10))


def daily_bars(noise: Noise, closes: list[int], gap_ppm: int, range_ppm: int) -> list[Bar]:
    """Bars whose open gaps a little from the previous close."""
    bars: list[Bar] = []
    previous = closes[0]
    for close in closes:
        open_micro = grow(previous, noise.scaled(gap_ppm))
        bars.append(make_bar(noise, open_micro, close, range_ppm, daily_volume(noise, 1_000_000)))
        previous = close
    return bars


def trend_closes(noise: Noise) -> list[int]:
    price, out = 40 * MICRO, []
    for _ in range(DAILY_BARS):
        price = grow(price, 600 + noise.scaled(10_000))
        out.append(price)
    return out


def chop_closes(noise: Noise) -> list[int]:
    """Ornstein-Uhlenbeck around 100: 5 % of the gap closes each day."""
    mean, price, out = 100 * MICRO, 100 * MICRO, []
    for _ in range(DAILY_BARS):
        price += (mean - price) * 50_000 // PPM + noise.scaled(1_500_000)
        price = max(price, 50 * MICRO)
        out.append(price)
    return out


def crash_closes(noise: Noise) -> list[int]:
    """A calm climb, a crash of about half over ``CRASH_DAYS`` bars, a choppy recovery."""
    price, out = 60 * MICRO, []
    for index in range(DAILY_BARS):
        if index < CRASH_START:
            step = 500 + noise.scaled(8_000)
        elif index < CRASH_START + CRASH_DAYS:
            step = -27_000 + noise.scaled(25_000)
        else:
            step = 350 + noise.scaled(16_000)
        price = grow(price, step)
        out.append(price)
    return out


def pairs_closes(noise: Noise) -> tuple[list[int], list[int]]:
    """KAPPA a random walk; XI = 1.5 * KAPPA + 10 + a mean-reverting spread."""
    kappa, spread = 50 * MICRO, 0
    kappas: list[int] = []
    xis: list[int] = []
    for _ in range(DAILY_BARS):
        kappa = max(5 * MICRO, grow(kappa, 150 + noise.scaled(15_000)))
        spread += -spread * 100_000 // PPM + noise.scaled(800_000)
        kappas.append(kappa)
        xis.append(kappa * 3 // 2 + 10 * MICRO + spread)
    return kappas, xis


def minute_tape(noise: Noise) -> str:
    """ACME one-minute bars, 390 per weekday 14:30-20:59 UTC, overnight gaps, U-shaped volume."""
    parts = [HEADER, "\n"]
    price = 100 * MICRO
    days = weekdays(date(2021, 1, 4))
    written = 0
    while written < MINUTE_BARS:
        day = next(days).isoformat()
        open_micro = grow(price, noise.scaled(5_000))
        for minute in range(MINUTES_PER_DAY):
            if written == MINUTE_BARS:
                break
            if minute:
                open_micro = price
            price = max(MICRO, grow(open_micro, 2 + noise.scaled(800)))
            shape = 20_000 + 40_000 * (minute - 195) ** 2 // 38_025
            volume = max(100, shape * (80 + noise.normal()) // 80)
            bar = make_bar(noise, open_micro, price, 300, volume)
            total = 870 + minute  # minutes since 00:00 UTC
            parts.append(bar.row(f"{day}T{total // 60:02d}:{total % 60:02d}:00Z", "ACME"))
            written += 1
    return "".join(parts)


def tape_text(times: list[str], columns: dict[str, list[Bar]]) -> str:
    parts = [HEADER, "\n"]
    for index, time in enumerate(times):
        for symbol in sorted(columns):
            parts.append(columns[symbol][index].row(time, symbol))
    return "".join(parts)


def scenario_toml(
    scenario_id: str,
    title: str,
    description: str,
    *,
    tape: str = "tape.csv",
    interval: str = "1d",
    bars_per_year: int = 252,
    symbols: tuple[str, ...] = ("ACME",),
    shortable: bool = False,
    max_drawdown: str = "1.0",
) -> str:
    instruments = "".join(
        f'\n[[instruments]]\nsymbol = "{symbol}"\ntick = "0.01"\nlot = 1\n' for symbol in symbols
    )
    return (
        f'id = "{scenario_id}"\n'
        f'title = "{title}"\n'
        f'description = "{description}"\n'
        f'tape = "{tape}"\n'
        f'interval = "{interval}"\n'
        f"bars_per_year = {bars_per_year}\n"
        "\n[account]\n"
        'cash = "100000.00"\n'
        f"shortable = {'true' if shortable else 'false'}\n"
        "max_position = 100000\n"
        f'max_drawdown = "{max_drawdown}"\n'
        "\n[fees]\n"
        'bps = "10"\n'
        'minimum = "0.00"\n'
        "\n[fill]\n"
        'participation = "1"\n'
        'slippage_bps = "0"\n'
        f"{instruments}"
    )


def basket_files() -> dict[str, bytes]:
    """Twenty stocks in five sectors, their index and their news (``scenarios.basket``)."""
    made = basket("basket-20", BASKET_SIZE, BASKET_BARS)
    sectors = "; ".join(f"{name}: {', '.join(symbols)}" for name, symbols in made.sectors().items())
    return {
        "scenario.toml": scenario_toml(
            "basket-20",
            "Twenty stocks, their index and their news",
            # names nothing after bar 0 but what the news promises in general
            f"Synthetic daily bars of {BASKET_SIZE} stocks from {made.times[0][:10]} ({sectors})"
            f" and {INDEX}, their equal-weighted index. Each stock moves with the market, its"
            " sector and on its own. News items (news.jsonl) come after the close: an"
            " earnings beat or miss is followed by weeks of drift its way, a central-bank cut"
            " or hike moves the whole market for days, other notices move nothing. Reading"
            " the news pays. Shortable.",
            symbols=made.symbols,
            shortable=True,
        ).encode(),
        "tape.csv": made.tape.encode(),
        "news.jsonl": made.news.encode(),
    }


def gzip_bytes(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as out:
        out.write(data)
    return buffer.getvalue()


def build() -> dict[str, dict[str, bytes]]:
    """Every shipped scenario directory as ``{id: {file name: bytes}}``."""
    out: dict[str, dict[str, bytes]] = {}
    times = daily_times(DAILY_BARS)

    noise = Noise("acme-trend")
    bars = daily_bars(noise, trend_closes(noise), 3_000, 8_000)
    out["acme-trend"] = {
        "scenario.toml": scenario_toml(
            "acme-trend",
            "ACME daily, trending up",
            f"{DAILY_BARS} synthetic daily bars of ACME ({times[0][:10]} to {times[-1][:10]})"
            " with a steady upward drift and about 16 % yearly volatility: the close rises"
            f" from {price_text(bars[0].close)} to {price_text(bars[-1].close)}.",
        ).encode(),
        "tape.csv": tape_text(times, {"ACME": bars}).encode(),
    }

    noise = Noise("acme-chop")
    bars = daily_bars(noise, chop_closes(noise), 3_000, 8_000)
    out["acme-chop"] = {
        "scenario.toml": scenario_toml(
            "acme-chop",
            "ACME daily, choppy and mean-reverting",
            f"{DAILY_BARS} synthetic daily bars of ACME ({times[0][:10]} to {times[-1][:10]})"
            " that keep returning to about 100 (half of any gap closes in about 14 bars):"
            " no trend to ride, fades pay.",
        ).encode(),
        "tape.csv": tape_text(times, {"ACME": bars}).encode(),
    }

    noise = Noise("acme-crash")
    bars = daily_bars(noise, crash_closes(noise), 3_000, 10_000)
    out["acme-crash"] = {
        "scenario.toml": scenario_toml(
            "acme-crash",
            "ACME daily with a crash",
            # names nothing after bar 0 (no date, price or length of what follows): the
            # crash is the test, an agent meets it when its clock does
            f"Synthetic daily bars of ACME from {times[0][:10]}: a calm climb, then a crash"
            " that halves the price within weeks, then a slow recovery. max_drawdown is"
            " 0.25 (not 1.0) on purpose: a fully invested long holder reaches a 25 %"
            " drawdown in the crash and is stood down automatically (reason max-drawdown).",
            max_drawdown="0.25",
        ).encode(),
        "tape.csv": tape_text(times, {"ACME": bars}).encode(),
    }

    noise = Noise("pairs-kx")
    kappas, xis = pairs_closes(noise)
    columns = {
        "KAPPA": daily_bars(noise, kappas, 2_000, 6_000),
        "XI": daily_bars(noise, xis, 2_000, 6_000),
    }
    out["pairs-kx"] = {
        "scenario.toml": scenario_toml(
            "pairs-kx",
            "KAPPA and XI, a cointegrated pair",
            f"{DAILY_BARS} synthetic daily bars of KAPPA and XI ({times[0][:10]} to"
            f" {times[-1][:10]}). Each wanders on its own, but XI stays near"
            " 1.5 x KAPPA + 10 (the spread mean-reverts with a half-life of about 7 bars)."
            " Shortable, for"
            " pairs trading.",
            symbols=("KAPPA", "XI"),
            shortable=True,
        ).encode(),
        "tape.csv": tape_text(times, columns).encode(),
    }

    out["basket-20"] = basket_files()

    noise = Noise("minute-200k")
    minute = minute_tape(noise).encode()
    first = minute.split(b"\n", 2)[1][:10].decode()
    last = minute.rstrip(b"\n").rsplit(b"\n", 1)[1][:10].decode()
    out["minute-200k"] = {
        "scenario.toml": scenario_toml(
            "minute-200k",
            "ACME one-minute bars, 200,000 of them",
            f"{MINUTE_BARS:,} synthetic one-minute bars of ACME with volume, {first} to {last}:"
            " 390 bars per weekday from 14:30 to 20:59 UTC (the last day is partial),"
            " overnight gaps, U-shaped intraday volume. For benchmarks and tif day.",
            tape="tape.csv.gz",
            interval="1m",
            bars_per_year=98280,
        ).encode(),
        "tape.csv.gz": gzip_bytes(minute),
    }
    return out


def generate(out_dir: Path) -> list[Path]:
    """Write every scenario under ``out_dir``; returns the files written."""
    written: list[Path] = []
    for scenario_id, files in build().items():
        directory = out_dir / scenario_id
        directory.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            path = directory / name
            path.write_bytes(data)
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("out", nargs="?", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    for path in generate(args.out):
        print(path)  # noqa: T201 - a script reporting what it wrote
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
