"""The one exception type every secret-store refusal is raised as.

It subclasses ``KestrelError`` so a face reports it like any other refusal
(``{code, message, detail}``), and its text is built only from key names, paths and
fixed sentences: a secret value never reaches an exception message.
"""

from __future__ import annotations

from kestrel_protocol import KestrelError

__all__ = ["SecretStoreError"]


class SecretStoreError(KestrelError):
    """A typed refusal from the secret store (``SECRET_*`` codes)."""
