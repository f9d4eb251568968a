"""The engine a replay starts from: a session's frames are in one of two forms.

A sealed session's frames have no ``clock.remaining`` and their roots are of what is
served (:mod:`..sealed`); every other session's have it. Neither the record nor the
pentads name the form: the chain does. Its first root (the opening frame's, which the
first pentad's ``prev`` binds, or with no pentad the head) is that of exactly one form,
so a replay in an empty home, or in a runtime that seals differently, starts in the
form the session was served in. Sessions served before frames had a sealed form are
in the full one, and replay as they always did.
"""

from __future__ import annotations

from ..catalog.model import LoadedScenario
from .core import SessionEngine

__all__ = ["chain_engine"]


def chain_engine(
    loaded: LoadedScenario,
    session_id: str,
    first: str | None,
    *,
    head: str | None = None,
    sealed: bool = False,
) -> SessionEngine:
    """A fresh engine over ``loaded`` in the form whose opening root is ``first`` (the
    first pentad's ``prev``); with no pentad (``first`` ``None``), the form whose closed
    opening frame is ``head``. ``sealed`` is the form tried first, and the one given when
    neither matches (the replay then names the mismatch)."""
    if first is None and head is None:
        return SessionEngine(loaded, session_id, sealed=sealed)
    for form in (sealed, not sealed):
        engine = SessionEngine(loaded, session_id, sealed=form)
        if first is not None:
            if engine.frame_root() == first:
                return engine
        elif head is not None and head in _opening_heads(loaded, session_id, form):
            return engine
    return SessionEngine(loaded, session_id, sealed=sealed)


def _opening_heads(loaded: LoadedScenario, session_id: str, sealed: bool) -> tuple[str, str]:
    """The roots a session with no submission may end at: its opening frame's, and that
    frame closed."""
    engine = SessionEngine(loaded, session_id, sealed=sealed)
    opening = engine.frame_root()
    engine.close()
    return opening, engine.frame_root()
