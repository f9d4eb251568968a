"""Notifications sent on behalf of one request: progress and log messages.

A face builds a :class:`Notifier` per request from what the request asked for: a
``progressToken`` in ``params._meta`` (``notifications/progress``) and a log level
(``notifications/message``): the level ``logging/setLevel`` set (the handshake era) or
the request's own ``io.modelcontextprotocol/logLevel`` (2026-07-28, where a request
without one gets no log messages). Log records of the runtime (``kestrel_sdk``
loggers) emitted while the request runs, in its task or in a worker thread it started,
are collected and sent before the response; a record of another request never is.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from typing import Any, Final

from ..jsonrpc import INVALID_PARAMS
from .rpc import RpcError

__all__ = ["LOG_LEVELS", "LOG_LEVEL_KEY", "SILENT", "Notifier", "Send", "log_threshold"]

Send = Callable[[dict[str, Any]], Awaitable[None]]
"""Writes one JSON-RPC notification to the client."""

LOG_LEVEL_KEY: Final = "io.modelcontextprotocol/logLevel"
LOG_LEVELS: Final[Mapping[str, int]] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": 25,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": 55,
    "emergency": 60,
}
"""The MCP (syslog) levels and the Python level each stands for."""
_FORWARDED: Final = "kestrel_sdk"
_current: ContextVar[Notifier | None] = ContextVar("kestrel_notifier", default=None)
_installed = threading.Lock()
_IDLE: Final = nullcontext()
"""What :meth:`Notifier.capturing` returns when the request gets no log messages."""


def log_threshold(level: Any) -> int:
    """The Python level of an MCP level name; -32602 naming the levels otherwise."""
    if isinstance(level, str) and level in LOG_LEVELS:
        return LOG_LEVELS[level]
    names = ", ".join(LOG_LEVELS)
    raise RpcError(INVALID_PARAMS, f"level must be one of {names}", {"level": repr(level)})


def _name_of(levelno: int) -> str:
    """The MCP level a Python record's level maps to (the highest not above it)."""
    found = "debug"
    for name, number in LOG_LEVELS.items():
        if levelno >= number:
            found = name
    return found


class _Forwarder(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        notifier = _current.get()
        if notifier is not None:
            notifier.collect(record)


def _install() -> None:
    """Attach the forwarder to the runtime's loggers, once per process."""
    runtime = logging.getLogger(_FORWARDED)
    with _installed:
        if not any(isinstance(h, _Forwarder) for h in runtime.handlers):
            runtime.addHandler(_Forwarder())


class Notifier:
    """One request's notifications. ``send`` is ``None`` when the client cannot receive
    any (then nothing is collected and progress is not reported)."""

    def __init__(
        self, send: Send | None, *, progress_token: Any = None, log_level: int | None = None
    ) -> None:
        self._send = send
        self.progress_token = progress_token if send is not None else None
        self._threshold = log_level if send is not None else None
        self._records: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._last: float | None = None

    @classmethod
    def of(
        cls, send: Send | None, *, progress_token: Any = None, log_level: int | None = None
    ) -> Notifier:
        """A request's notifier: the one shared :data:`SILENT` when the request can be sent
        nothing (no ``send``, or neither a progress token nor a log level), which is most
        requests, so they build none."""
        if send is None or (progress_token is None and log_level is None):
            return SILENT
        return cls(send, progress_token=progress_token, log_level=log_level)

    @property
    def wants_progress(self) -> bool:
        token = self.progress_token
        return token is not None and isinstance(token, str | int) and not isinstance(token, bool)

    def collect(self, record: logging.LogRecord) -> None:
        if self._threshold is None or record.levelno < self._threshold:
            return
        params = {"level": _name_of(record.levelno), "logger": record.name}
        params["data"] = record.getMessage()
        with self._lock:
            self._records.append(params)

    def capturing(self) -> AbstractContextManager[None]:
        """Collect the runtime's log records emitted while the block runs."""
        return _IDLE if self._threshold is None else self._capture()

    @contextmanager
    def _capture(self) -> Iterator[None]:
        _install()
        token = _current.set(self)
        try:
            yield
        finally:
            _current.reset(token)

    @property
    def pending(self) -> bool:
        """Whether log messages are waiting for :meth:`flush`."""
        return bool(self._records)

    async def flush(self) -> None:
        """Send the log messages collected so far."""
        if self._send is None:
            return
        with self._lock:
            records, self._records = self._records, []
        for params in records:
            await self._send(_notification("notifications/message", params))

    async def progress(self, done: float, total: float | None, message: str) -> None:
        """Report progress; a value not above the last one reported is not sent."""
        if self._send is None or not self.wants_progress:
            return
        if self._last is not None and done <= self._last:
            return
        self._last = done
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": done}
        if total:
            params["total"] = total
        params["message"] = message
        await self.flush()
        await self._send(_notification("notifications/progress", params))


SILENT: Final = Notifier(None)
"""The notifier of a request that can be sent nothing: it collects and sends nothing."""


def _notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}
