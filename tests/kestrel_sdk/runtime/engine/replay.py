"""Run sources through an engine the way the service does, producing pentads and a record."""

from __future__ import annotations

from collections.abc import Sequence

from kestrel_protocol import Pentad, SessionRecord, root_of
from kestrel_sdk.runtime.catalog.model import LoadedScenario
from kestrel_sdk.runtime.engine import SessionEngine

__all__ = ["run_session"]


def run_session(
    loaded: LoadedScenario, sources: Sequence[str], session: str = "ks_test"
) -> tuple[SessionEngine, list[Pentad], SessionRecord]:
    """Submit each source (prev = root of the frame it applies to), close, and record."""
    engine = SessionEngine(loaded, session)
    pentads: list[Pentad] = []
    for seq, source in enumerate(sources, start=1):
        prev = root_of(engine.frame())
        engine.submit(source)
        pentads.append(
            Pentad.with_root(
                session=session,
                seq=seq,
                prev=prev,
                body={"media_type": "text/x-kestrel", "bytes": source},
            )
        )
    closed = engine.close()
    record = SessionRecord.with_root(
        session=session,
        scenario={"id": loaded.scenario.id, "root": loaded.scenario.root},
        label="1",
        pentads=[p.root for p in pentads],
        head=root_of(closed),
        blotter_root=engine.blotter().root,
        lookahead={"sealed": False, "reads": []},
    )
    return engine, pentads, record
