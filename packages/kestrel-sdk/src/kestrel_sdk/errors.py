"""The SDK's typed refusals: one per transport, one shared base."""

from __future__ import annotations

from kestrel_protocol import KestrelError

__all__ = ["KestrelClientError", "SdkError", "SdkLocalError"]


class SdkError(KestrelError):
    """Base of every refusal the SDK raises, whichever transport carried it."""


class SdkLocalError(SdkError):
    """A typed refusal from the in-process runtime (``local_transport``)."""


class KestrelClientError(SdkError):
    """A typed refusal received from a remote door (``remote_transport``)."""
