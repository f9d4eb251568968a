"""Kestrel door: the HTTP face, remote MCP over Streamable HTTP, and its credentials.

Library modules here depend on ``kestrel_protocol`` alone: its ports, and its tool and
resource (``kestrel_protocol.surface``) from which both faces are generated; the runtime is
injected by the composition root (``kestrel_door.cli``).
"""

from __future__ import annotations

from .app import create_door_app, protected_resource_metadata
from .approval import ApprovalPolicy, NoApproval, RequireApproval
from .attest import JWKS_PATH, Attestor, attesting
from .audit import AuditLog, AuditRow, argument_digest
from .auth import Authenticated, Authenticator, bearer_of
from .config import DoorConfig
from .connections import ConnectionLimits, limit_connections
from .door import Caller, TransportFactory
from .door_tools import APPROVAL_MESSAGE, DoorTurnTools
from .keys import DoorKeys, KeyNotLive
from .oauth import DEFAULT_ALGORITHMS, JwtGrantVerifier
from .principals import OAUTH_MARK, issuable_principal, oauth_principal
from .pseudonyms import PSEUDONYM_SECRET, Pseudonyms
from .store import DoorStore
from .stores import open_door_store
from .tokens import ISSUED_TOKEN_PREFIX, IssuedToken, IssuedTokens
from .trials import trial_routes
from .turn_credentials import (
    CREDENTIAL_IDLE_MS,
    TURN_CREDENTIAL_PREFIX,
    TurnCredentials,
    create_turn_credentials,
)
from .vouchers import VOUCHER_PREFIX, VoucherGate, VoucherSigner, load_voucher_key

__all__ = [
    "APPROVAL_MESSAGE",
    "CREDENTIAL_IDLE_MS",
    "DEFAULT_ALGORITHMS",
    "ISSUED_TOKEN_PREFIX",
    "JWKS_PATH",
    "OAUTH_MARK",
    "PSEUDONYM_SECRET",
    "TURN_CREDENTIAL_PREFIX",
    "VOUCHER_PREFIX",
    "ApprovalPolicy",
    "Attestor",
    "AuditLog",
    "AuditRow",
    "Authenticated",
    "Authenticator",
    "Caller",
    "ConnectionLimits",
    "DoorConfig",
    "DoorKeys",
    "DoorStore",
    "DoorTurnTools",
    "IssuedToken",
    "IssuedTokens",
    "JwtGrantVerifier",
    "KeyNotLive",
    "NoApproval",
    "Pseudonyms",
    "RequireApproval",
    "TransportFactory",
    "TurnCredentials",
    "VoucherGate",
    "VoucherSigner",
    "argument_digest",
    "attesting",
    "bearer_of",
    "create_door_app",
    "create_turn_credentials",
    "issuable_principal",
    "limit_connections",
    "load_voucher_key",
    "oauth_principal",
    "open_door_store",
    "protected_resource_metadata",
    "trial_routes",
]
