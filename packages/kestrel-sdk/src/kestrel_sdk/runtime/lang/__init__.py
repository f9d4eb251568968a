"""The Kestrel language (docs/spec.md §3): four statement kinds, parsed and validated
with K-codes."""

from __future__ import annotations

from .forms import FORM_EXAMPLES
from .kinds import STATEMENT_KINDS
from .lexer import Token, tokenize
from .parser import MAX_SOURCE_BYTES, MAX_STATEMENTS, check_limits, parse, parse_located
from .syntax import Advance, Amount, Cancel, Located, Order, StandDownStatement, Statement
from .validate import SessionContext, check_located, validate_source

__all__ = [
    "FORM_EXAMPLES",
    "MAX_SOURCE_BYTES",
    "MAX_STATEMENTS",
    "STATEMENT_KINDS",
    "Advance",
    "Amount",
    "Cancel",
    "Located",
    "Order",
    "SessionContext",
    "StandDownStatement",
    "Statement",
    "Token",
    "check_limits",
    "check_located",
    "parse",
    "parse_located",
    "tokenize",
    "validate_source",
]
