"""One socket write per response: what uvicorn writes in one event-loop step, sent once.

uvicorn's HTTP protocol writes a response's head when the app starts it and its body
when the app sends it, each a ``transport.write``; on an idle connection each write is
a ``send`` system call and, with ``TCP_NODELAY``, a segment that wakes the client. An
app answering at once (every JSON answer of the door) sends both in one step of the
event loop. :class:`CoalescedWrites`, the transport :mod:`kestrel_door.connections`
hands uvicorn's protocol, keeps the writes of one step and sends them together at the
end of it (``loop.call_soon``), in order: the bytes on the wire are the same, and a
response sent over several steps (an SSE stream) still goes out as each step ends.
Closing or ending the stream sends what is kept first; aborting drops it, as the
socket's own buffer is dropped.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["CoalescedWrites"]


class CoalescedWrites(asyncio.Transport):
    """``transport`` with each event-loop step's writes sent as one."""

    def __init__(self, transport: asyncio.Transport) -> None:
        super().__init__()
        self._transport = transport
        self._loop = asyncio.get_running_loop()
        self._kept: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        if not self._kept:
            self._loop.call_soon(self._send)
        self._kept.append(data if type(data) is bytes else bytes(data))

    def writelines(self, list_of_data: Any) -> None:
        for data in list_of_data:
            self.write(data)

    def _send(self) -> None:
        kept = self._kept
        if not kept:
            return
        data = kept[0] if len(kept) == 1 else b"".join(kept)
        kept.clear()
        self._transport.write(data)

    def close(self) -> None:
        self._send()
        self._transport.close()

    def write_eof(self) -> None:
        self._send()
        self._transport.write_eof()

    def abort(self) -> None:
        self._kept.clear()
        self._transport.abort()

    def can_write_eof(self) -> bool:
        return self._transport.can_write_eof()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._transport.get_protocol()

    def is_reading(self) -> bool:
        return self._transport.is_reading()

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._transport.set_write_buffer_limits(high, low)

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(len(d) for d in self._kept)

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._transport.get_write_buffer_limits()
