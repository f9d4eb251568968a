"""Long operations (grades) that outlive one call: run in a worker thread, resumable.

A call waits up to its budget; if the work is not done it gets an
``OperationResumption`` (continuation as data) and comes back with the token. The
work itself is deterministic; only *when* the caller sees it depends on time.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from kestrel_protocol import (
    KestrelError,
    OperationProgress,
    OperationResumption,
    RefusalCode,
    clipped,
)

__all__ = ["Operation", "Operations"]

log = logging.getLogger(__name__)

T = TypeVar("T")

RESUME_AFTER_MS = 250
KEEP_FINISHED = 1024
"""Finished operations remembered for ``resume``; older ones are forgotten."""


@dataclass(eq=False)
class Operation(Generic[T]):
    """One running or finished piece of work, owned by one principal."""

    id: str
    principal: str
    token: str
    done: threading.Event = field(default_factory=threading.Event)
    result: T | None = None
    error: BaseException | None = None
    progress: tuple[int, int] = (0, 0)

    def report(self, done: int, total: int) -> None:
        self.progress = (done, total)

    def resumption(self) -> OperationResumption:
        done, total = self.progress
        return OperationResumption(
            operation=self.id,
            progress=OperationProgress(done=done, total=total),
            resume_after_ms=RESUME_AFTER_MS,
            token=self.token,
        )


class Operations(Generic[T]):
    """The process's registry of operations, keyed by id and by token."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_id: dict[str, Operation[T]] = {}
        self._by_token: dict[str, Operation[T]] = {}
        self._abandoned = False

    def abandon(self) -> None:
        """The runtime is shutting down (its store closes next, a Ctrl-C say): work still
        running fails on the closed store, which is no fault to report. Nothing of it is
        half-stored (each write is one transaction); the next grade does it again."""
        self._abandoned = True

    def start(
        self,
        operation_id: str,
        principal: str,
        work: Callable[[Callable[[int, int], None]], T],
        total: int = 0,
    ) -> Operation[T]:
        """Start ``work(progress)`` in a worker thread, or join the same operation still
        running (a repeated grade of the same record does the work once). One that
        finished is done again: its caller found its result gone from the store (a
        session discarded and made again, by any process, gets its grade stored).
        ``total`` is the progress reported until the work first reports its own:
        ``(0, total)``."""
        with self._lock:
            existing = self._by_id.get(operation_id)
            if existing is not None and not existing.done.is_set():
                return existing
            self._prune()
            token = "opt_" + hashlib.sha256(f"{operation_id}\x00{principal}".encode()).hexdigest()
            op: Operation[T] = Operation(operation_id, principal, token, progress=(0, total))
            self._by_id[operation_id] = op
            self._by_token[token] = op

        def run() -> None:
            try:
                op.result = work(op.report)
            except BaseException as exc:  # reported to whoever waits
                op.error = exc
                if self._abandoned:
                    log.debug("operation %s abandoned at shutdown", operation_id, exc_info=exc)
                elif not isinstance(exc, KestrelError):
                    log.exception("operation %s failed", operation_id)
            finally:
                op.done.set()

        threading.Thread(target=run, name=f"kestrel-{operation_id}", daemon=True).start()
        return op

    def _prune(self) -> None:
        """Forget the oldest finished operations beyond :data:`KEEP_FINISHED` (their
        results are stored elsewhere; a forgotten token is ``UNKNOWN_OPERATION``)."""
        finished = [op for op in self._by_id.values() if op.done.is_set()]
        for op in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            self._by_id.pop(op.id, None)
            self._by_token.pop(op.token, None)

    def find(self, principal: str, token: str) -> Operation[T]:
        """The operation of ``token``; another principal's token is unknown to this one."""
        with self._lock:
            op = self._by_token.get(token)
        if op is None or op.principal != principal:
            raise KestrelError(
                RefusalCode.UNKNOWN_OPERATION,
                "no such operation (grade the session again for a fresh token)",
                {"token": clipped(token)},
            )
        return op

    @staticmethod
    def wait(op: Operation[T], budget: float) -> T | OperationResumption:
        """The result if it is ready within ``budget`` seconds, else a resumption."""
        if not op.done.wait(max(0.0, budget)):
            return op.resumption()
        if op.error is not None:
            raise op.error
        assert op.result is not None
        return op.result
