"""Kestrel door: the HTTP face, remote MCP over Streamable HTTP, and its credentials.

Library modules here depend on ``kestrel_protocol`` ports alone; the runtime and the
MCP server are injected by the composition root (``kestrel_door.cli``).
"""

from __future__ import annotations

from .app import create_door_app, protected_resource_metadata
from .approval import ApprovalPolicy, NoApproval, RequireApproval
from .audit import AuditLog, AuditRow, argument_digest
from .auth import Authenticated, Authenticator, bearer_of
from .basic_mcp import BasicMcpHandler
from .config import DoorConfig
from .door import McpFactory, McpHandler, TransportFactory
from .door_tools import APPROVAL_MESSAGE, DoorTurnTools
from .oauth import DEFAULT_ALGORITHMS, JwtGrantVerifier
from .scopes import ALL_SCOPES, SCOPE_GRADE, SCOPE_READ, SCOPE_TRADE, required_scope
from .store import DoorStore
from .tokens import ISSUED_TOKEN_PREFIX, IssuedToken, IssuedTokens
from .tools import DOOR_TOOL_NAMES, ToolArgumentError, run_transport_tool
from .turn_credentials import (
    CREDENTIAL_IDLE_MS,
    TURN_CREDENTIAL_PREFIX,
    TurnCredentials,
    create_turn_credentials,
)
from .vouchers import VOUCHER_PREFIX, VoucherGate, VoucherSigner, load_voucher_key

__all__ = [
    "ALL_SCOPES",
    "APPROVAL_MESSAGE",
    "CREDENTIAL_IDLE_MS",
    "DEFAULT_ALGORITHMS",
    "DOOR_TOOL_NAMES",
    "ISSUED_TOKEN_PREFIX",
    "SCOPE_GRADE",
    "SCOPE_READ",
    "SCOPE_TRADE",
    "TURN_CREDENTIAL_PREFIX",
    "VOUCHER_PREFIX",
    "ApprovalPolicy",
    "AuditLog",
    "AuditRow",
    "Authenticated",
    "Authenticator",
    "BasicMcpHandler",
    "DoorConfig",
    "DoorStore",
    "DoorTurnTools",
    "IssuedToken",
    "IssuedTokens",
    "JwtGrantVerifier",
    "McpFactory",
    "McpHandler",
    "NoApproval",
    "RequireApproval",
    "ToolArgumentError",
    "TransportFactory",
    "TurnCredentials",
    "VoucherGate",
    "VoucherSigner",
    "argument_digest",
    "bearer_of",
    "create_door_app",
    "create_turn_credentials",
    "load_voucher_key",
    "protected_resource_metadata",
    "required_scope",
    "run_transport_tool",
]
