"""Kestrel SDK: ``create_sdk`` over ``local_transport`` (the runtime) or ``remote_transport``;
``Kestrel``, the same as blocking calls for scripts and notebooks."""

from __future__ import annotations

from .board.published import PublishedBoard, published_board, published_document
from .cli_convention import KestrelCliCommand, KestrelCliGroup
from .client import Gated, KestrelSdk, KestrelSession, create_sdk
from .door_token import API_TOKEN_ENV, door_token
from .errors import KestrelClientError, SdkError, SdkLocalError
from .render import render_frame
from .results import BlotterView, Frames, GradeView, ProofView
from .runtime.catalog import CATALOG_PATH_ENV
from .runtime.catalog.renamed import seal_specs
from .sync import Kestrel, SyncSession
from .transports import local_transport, remote_transport

__all__ = [
    "API_TOKEN_ENV",
    "CATALOG_PATH_ENV",
    "BlotterView",
    "Frames",
    "Gated",
    "GradeView",
    "Kestrel",
    "KestrelCliCommand",
    "KestrelCliGroup",
    "KestrelClientError",
    "KestrelSdk",
    "KestrelSession",
    "ProofView",
    "PublishedBoard",
    "SdkError",
    "SdkLocalError",
    "SyncSession",
    "create_sdk",
    "door_token",
    "local_transport",
    "published_board",
    "published_document",
    "remote_transport",
    "render_frame",
    "seal_specs",
]
