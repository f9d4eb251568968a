"""What a board reads: proof files, directories of them, and Inspect AI logs.

Every input becomes one or more :class:`Entry` (a proof's JSON data with where it came
from and the agent it belongs to), or an entry that already failed (unreadable, not a
proof, a sample without a proof), so that nothing given is silently dropped.

An Inspect log (``.eval``, or an Inspect ``.json`` log) is read with ``inspect_ai.log``;
the proof of each sample is where ``kestrel_inspect``'s scorer keeps it
(``score.metadata["kestrel"]["proof"]``); the agent is the one the sample was run for
(``-T agent=NAME``: the sample's ``metadata["agent"]``), else the log's model. A log
with no sample completed (a run that died before any sample was scored) is a failed
entry that says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kestrel_protocol.documents import Unreadable, check_depth, read_json, size_problem

__all__ = ["INSPECT_METADATA_KEY", "Entry", "NoProofs", "is_inspect_log", "read_entries"]

INSPECT_METADATA_KEY = "kestrel"
"""The score metadata key under which ``kestrel_inspect`` keeps a sample's proof."""

_INSTALL_INSPECT = (
    "reading it needs inspect-ai, which kestrel-sdk alone does not install: in the clone, "
    "`uv run --package kestrel-inspect kestrel board …`; in another environment, "
    '`uv pip install "$KESTREL/packages/kestrel-inspect"`'
)


class NoProofs(ValueError):
    """A directory given holds no proof to read (no ``.json`` or ``.eval`` file in it or
    below it): bad input, refused before any board is written (a board of nothing given
    would say nothing was wrong)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One proof to put on the board (``data``), or why there is none (``problem``);
    ``agent``: where it was filed (folder, file, model), ``named``: the agent the run
    was named for, which the row is credited to before anyone else; ``pair``: the
    (labelled, disguised) twins an Inspect sample says it ran one of (a claim: only a
    reveal confirms it, :mod:`.gaps`)."""

    source: str
    agent: str
    data: Any = None
    problem: str | None = None
    named: str | None = None
    pair: tuple[str, str] | None = None


def _shown(path: Path | str) -> str:
    """A path as text that can be written anywhere: a name that is not UTF-8 shows its
    bytes escaped (``\\xff``) instead of breaking the page."""
    raw = str(path).encode("utf-8", "surrogateescape")
    return raw.decode("utf-8", "backslashreplace")


def _looks_like_inspect_log(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("eval"), dict) and "status" in data


def is_inspect_log(path: Path, data: Any = None) -> bool:
    """Whether the board reads ``path`` as an Inspect log: a ``.eval`` file, or ``data``
    (its JSON, when it is JSON) shaped as Inspect's ``.json`` log."""
    return path.suffix == ".eval" or _looks_like_inspect_log(data)


def _inspect_entries(path: Path) -> Iterator[Entry]:
    try:
        from inspect_ai.log import read_eval_log  # noqa: PLC0415 - an optional dependency
    except ImportError:
        yield Entry(_shown(path), "?", problem=f"an Inspect log: {_INSTALL_INSPECT}")
        return
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # any failure to read the log is a row, not a crash
        yield Entry(_shown(path), "?", problem=f"not a readable Inspect log: {exc}")
        return
    agent = log.eval.model
    if not log.samples:
        status = log.status + (f": {log.error.message}" if log.error is not None else "")
        yield Entry(_shown(path), agent, problem=f"the log completed no sample (status {status})")
        return
    for sample in log.samples:
        source = f"{_shown(path)}#{sample.id}" + (
            f"/epoch {sample.epoch}" if sample.epoch > 1 else ""
        )
        given = (sample.metadata or {}).get("agent")
        named = given if isinstance(given, str) and given else None
        pair = _pair((sample.metadata or {}).get("pair"))
        proofs = [
            (score.metadata or {}).get(INSPECT_METADATA_KEY, {}).get("proof")
            for score in (sample.scores or {}).values()
        ]
        found = [p for p in proofs if p is not None]
        if found:
            for proof in found:
                yield _checked(source, agent, proof, named, pair)
            continue
        why = "; ".join(
            score.explanation for score in (sample.scores or {}).values() if score.explanation
        )
        if sample.error is not None:
            why = why or f"the sample failed: {sample.error.message}"
        problem = f"no proof in the sample: {why or 'not scored'}"
        yield Entry(source, agent, problem=problem, named=named, pair=pair)


def _pair(value: Any) -> tuple[str, str] | None:
    """The (labelled, disguised) pair a sample's metadata names (``kestrel_trading``'s
    ``pairs``), else None."""
    if isinstance(value, list | tuple) and len(value) == 2:
        labelled, disguised = value
        if isinstance(labelled, str) and isinstance(disguised, str) and labelled and disguised:
            return labelled, disguised
    return None


def _checked(
    source: str, agent: str, proof: Any, named: str | None, pair: tuple[str, str] | None
) -> Entry:
    """A proof from an Inspect log, held to the same nesting limit as a proof file."""
    try:
        check_depth(proof)
    except Unreadable as exc:
        return Entry(source, agent, problem=str(exc), named=named, pair=pair)
    return Entry(source, agent, proof, named=named, pair=pair)


def _file_entries(path: Path, agent: str) -> Iterator[Entry]:
    if path.suffix == ".eval":
        problem = size_problem(path)
        if problem is not None:
            yield Entry(_shown(path), agent, problem=problem)
        else:
            yield from _inspect_entries(path)
        return
    try:
        data = read_json(path)
    except Unreadable as exc:
        yield Entry(_shown(path), agent, problem=str(exc))
        return
    if _looks_like_inspect_log(data):
        yield from _inspect_entries(path)
    elif isinstance(data, dict) and data.get("kind") == "kestrel.proof":
        yield Entry(_shown(path), agent, data)
    elif isinstance(data, dict) and data.get("kind") == "kestrel.grade":
        yield Entry(
            _shown(path),
            agent,
            problem="a grade, not a proof: a grade names roots in its own store "
            "(`kestrel proof SESSION -o FILE` makes the proof)",
        )
    else:
        yield Entry(_shown(path), agent, problem="not a Kestrel proof or an Inspect log")


def read_entries(paths: list[Path]) -> list[Entry]:
    """Every entry of ``paths``, in order: a directory's ``.json`` and ``.eval`` files
    (recursively, sorted by path), a file as itself.

    A proof file's agent is the folder it sits in below a directory given (one folder
    per agent: ``proofs/AGENT/…``), else the file's name without ``.json``; an Inspect
    log's is its model. Every file is read within the limits of
    :mod:`kestrel_protocol.documents`: a bad one is an entry saying why. A directory
    without one such file raises :class:`NoProofs`.
    """
    entries: list[Entry] = []
    for path in paths:
        if path.is_dir():
            files = sorted(
                p for p in path.rglob("*") if p.is_file() and p.suffix in (".json", ".eval")
            )
            if not files:
                raise NoProofs(
                    f"{_shown(path)}: the directory holds no proofs (no .json proof or .eval "
                    "Inspect log in it or below it)"
                )
            for file in files:
                parts = file.relative_to(path).parts
                agent = parts[0] if len(parts) > 1 else file.stem
                entries.extend(_file_entries(file, _shown(agent)))
        elif path.exists():
            entries.extend(_file_entries(path, _shown(path.stem)))
        else:
            entries.append(
                Entry(_shown(path), _shown(path.stem), problem="no such file or directory")
            )
    return entries
