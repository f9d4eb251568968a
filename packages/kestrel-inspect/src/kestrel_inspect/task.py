"""``kestrel_trading``: an Inspect task whose samples are Kestrel scenarios."""

from __future__ import annotations

import os
from collections.abc import Sequence

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from kestrel_protocol.surface import STYLES

from .agent import kestrel_agent
from .connection import KestrelConnection
from .forward import WAIT_SECONDS
from .scorer import kestrel_scorer

__all__ = ["kestrel_trading"]


def _names(value: str | Sequence[str] | None, what: str, sep: str = ",") -> list[str]:
    if value is None:
        return []
    items = value.split(sep) if isinstance(value, str) else [str(v) for v in value]
    names = [item.strip() for item in items if item.strip()]
    if len(set(names)) != len(names):
        raise ValueError(f"kestrel_trading: {what} lists one twice: {', '.join(names)}")
    return names


ROLES = ("labelled", "disguised")
"""A pair's two runs, in the order ``pairs`` names them."""


def _pairs(value: str | Sequence[str | Sequence[str]] | None) -> list[tuple[str, str]]:
    """``LABELLED,DISGUISED`` pairs: one string (pairs separated by ``;``), a list of
    such strings or of two-item lists. Inspect's ``-T`` splits a value at its commas
    (``-T pairs=a,b;c,d`` arrives as ``["a", "b;c", "d"]``): a list of plain names is
    joined back first."""
    if value is None:
        return []
    if not isinstance(value, str) and all(isinstance(v, str) and "," not in v for v in value):
        value = ",".join(str(v) for v in value)
    items: list[str | Sequence[str]] = (
        list(value.split(";")) if isinstance(value, str) else list(value)
    )
    pairs = []
    for item in items:
        names = _names(item, "a pair") if isinstance(item, str) else [str(v).strip() for v in item]
        if not any(names):
            continue
        if len(names) != len(ROLES) or not all(names):
            raise ValueError(
                f"kestrel_trading: a pair is LABELLED,DISGUISED (two scenario ids), got {item!r}"
            )
        pairs.append((names[0], names[1]))
    return pairs


def _samples(
    ids: list[str], pairs: list[tuple[str, str]], metadata: dict[str, str]
) -> list[Sample]:
    """One sample per scenario, and per scenario of each pair (naming the pair and its
    role); a scenario named twice is refused."""
    runs: list[tuple[str, dict[str, object]]] = [(scenario, {}) for scenario in ids]
    for pair in pairs:
        roles = zip(pair, ROLES, strict=True)
        runs += [(name, {"pair": list(pair), "role": role}) for name, role in roles]
    names = [name for name, _ in runs]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(
            f"kestrel_trading: scenarios and pairs name {', '.join(twice)} twice "
            "(one sample per scenario: --epochs N runs each N times)"
        )
    return [
        Sample(
            id=scenario,
            input=f"Trade the Kestrel scenario {scenario}.",
            metadata={"scenario": scenario, **metadata, **extra},
        )
        for scenario, extra in runs
    ]


@task
def kestrel_trading(
    scenarios: str | Sequence[str] | None = None,
    *,
    door: str | None = None,
    token_file: str | None = None,
    style: str = "balanced",
    home: str | None = None,
    catalog_path: str | Sequence[str] | None = None,
    embed_tape: bool = False,
    agent: str | None = None,
    pairs: str | Sequence[str | Sequence[str]] | None = None,
    wait: float = WAIT_SECONDS,
) -> Task:
    """Trade Kestrel scenarios: one sample per scenario, scored from its replayable grade.

    Args:
        scenarios: Scenario ids (a list, or one comma-separated string:
            ``-T scenarios=acme-trend,acme-chop``); ``kestrel catalog`` lists them.
        door: A Kestrel door's base URL: the agent trades through its remote MCP
            (``/mcp``) with its bearer token. Without it the agent trades through ``kestrel-mcp``
            over stdio on this machine.
        token_file: A file holding the door's bearer token; without it the token is
            read from ``$KESTREL_API_TOKEN``. The token itself is never a task
            argument, so it is not written into the eval log's ``task_args``.
        style: How the brief asks the model to trade: cautious, balanced or aggressive.
        home: The Kestrel home of the local ``kestrel-mcp`` (default ``$KESTREL_HOME``).
        catalog_path: Extra scenario directories for the local ``kestrel-mcp``
            (a list, or one ``os.pathsep``-separated string).
        embed_tape: Embed the scenario and its tape in each proof (for a scenario the
            verifier's catalog does not ship).
        agent: The name of the agent evaluated (``-T agent=NAME``), kept in each
            sample's metadata: ``kestrel board`` credits the sample's row to it, so two
            strategies run on one model (or one token) are two rows, not one.
        pairs: Labelled tapes and their disguised twins, ``LABELLED,DISGUISED``, several
            separated by ``;`` (``-T pairs=goog-2008,goog-2008-x``) or a list: one sample
            per scenario of each pair, its metadata naming the ``pair`` and its ``role``
            (``labelled`` or ``disguised``), each run as a trial of its own.
            ``kestrel board LOGS --reveal FILE`` shows each agent's memorisation gap.
        wait: On a forward scenario (its tape grows while the agent trades), how many
            seconds a submit waits for bars not yet published (the submit tool's
            ``wait``, unless the model gave one or wrote one in its source; at most 300); a
            ``BAR_NOT_PUBLISHED`` that still comes back is submitted again, a few
            times, before the model sees it.

    Inspect's own options apply as to any task: ``--epochs N`` trades each scenario N
    times (a new session each, each sample and epoch as its own trial principal, so the
    runs do not share a horizon), ``--message-limit`` bounds a sample's conversation.
    """
    ids, twins = _names(scenarios, "scenarios"), _pairs(pairs)
    if not ids and not twins:
        raise ValueError(
            "kestrel_trading: name the scenarios to trade, e.g. "
            "-T scenarios=acme-trend,acme-chop (`kestrel catalog` lists them), or pairs "
            "of a labelled tape and its disguised twin: -T pairs=LABELLED,DISGUISED"
        )
    if agent is not None and not str(agent).strip():
        raise ValueError("kestrel_trading: agent, when given, must name the agent")
    if not 0 < float(wait) <= 300:
        raise ValueError(f"kestrel_trading: wait is a number of seconds up to 300, got {wait}")
    if style not in STYLES:
        raise ValueError(f"kestrel_trading: style {style!r} is not one of {', '.join(STYLES)}")
    connection = KestrelConnection(
        door=door,
        token_file=token_file,
        home=home,
        catalog_paths=tuple(_names(catalog_path, "catalog_path", os.pathsep)),
    )
    connection.inspect_server()  # a door without a readable token is refused here, at once
    metadata = {
        "connection": connection.where,
        **({"agent": str(agent).strip()} if agent is not None else {}),
    }
    dataset = MemoryDataset(_samples(ids, twins, metadata), name="kestrel")
    return Task(
        dataset=dataset,
        solver=kestrel_agent(connection, style, float(wait)),
        scorer=kestrel_scorer(connection, embed_tape),
        cleanup=connection.end_trial,
    )
