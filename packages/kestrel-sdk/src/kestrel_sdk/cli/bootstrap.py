"""The ``kestrel`` process's composition root: the SDK its verbs use, built from the
:class:`~kestrel_protocol.settings.KestrelSettings` the root group resolved once.

Local: ``local_transport`` over the runtime in ``settings.home`` (its store the one
``settings.store`` names, else SQLite in the home). Remote: ``remote_transport`` to
``settings.remote``, its bearer ``$KESTREL_API_TOKEN`` else the home's secret store
(:func:`~kestrel_sdk.door_token.door_token`, the rule ``kestrel-mcp --remote`` shares).
"""

from __future__ import annotations

import click
from kestrel_protocol.settings import KestrelSettings

from ..client import KestrelSdk, create_sdk
from ..door_token import door_token
from ..transports import local_transport, remote_transport

__all__ = ["LOCAL_PRINCIPAL", "open_sdk", "settings_of"]

LOCAL_PRINCIPAL = "local"
"""The principal every local verb acts as (the home's owner)."""


def open_sdk(settings: KestrelSettings, principal: str = LOCAL_PRINCIPAL) -> KestrelSdk:
    """The SDK over the transport ``settings`` choose (the caller closes it), acting as
    ``principal`` on a local runtime (a door decides its caller's principal from the token)."""
    if settings.remote:
        return create_sdk(remote_transport(base_url=settings.remote, token=door_token(settings)))
    return create_sdk(
        local_transport(
            home=settings.home,
            catalog_paths=settings.catalog_dirs,
            principal=principal,
            store=settings.store,
        )
    )


def settings_of(ctx: click.Context) -> KestrelSettings:
    """The settings the ``kestrel`` group resolved; resolved afresh when a verb runs
    without it (a plugin's own console script, or a test invoking one verb)."""
    found = ctx.find_object(KestrelSettings)
    return found if found is not None else KestrelSettings.resolve()
