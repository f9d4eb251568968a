"""Kestrel protocol: objects, canonical JSON and roots, JSON-RPC types, refusals, ports,
and where Kestrel's files live.

The one barrel of the protocol objects: each module of :mod:`.objects` names its objects
in its ``__all__``, and every one is re-exported here.

Depends on pydantic alone so that any client can speak Kestrel.
"""

from __future__ import annotations

from .attestation import (
    PAYLOAD_TYPE,
    PREDICATE_TYPE,
    STATEMENT_TYPE,
    TRIALS_PREDICATE_TYPE,
    grade_facts,
    grade_statement,
    pae,
    trials_statement,
)
from .canonical import (
    MAX_SAFE_INTEGER,
    CanonicalizationError,
    RootOfBytes,
    canonical_json,
    root_of,
    root_of_bytes,
    to_json_value,
)
from .decimals import DEFAULT_DECIMAL_CONTEXT, decimal_context
from .errors import KestrelError, Refusal, RefusalCode
from .home import kestrel_home
from .language import ORDER_FORMS, order_form_lines
from .model import (
    DecimalStr,
    ProtocolModel,
    Quantity,
    RootMismatchError,
    RootStr,
    SelfRooted,
    Volume,
    money,
    ratio,
)
from .objects import attestation as _attestation
from .objects import blotter as _blotter
from .objects import catalog as _catalog
from .objects import grade as _grade
from .objects import history as _history
from .objects import listing as _listing
from .objects import news as _news
from .objects import news_item as _news_item
from .objects import offer as _offer
from .objects import proof as _proof
from .objects import reads as _reads
from .objects import record as _record
from .objects import session as _session
from .objects import validation as _validation
from .objects.attestation import *  # noqa: F403
from .objects.blotter import *  # noqa: F403
from .objects.catalog import *  # noqa: F403
from .objects.grade import *  # noqa: F403
from .objects.history import *  # noqa: F403
from .objects.listing import *  # noqa: F403
from .objects.news import *  # noqa: F403
from .objects.news_item import *  # noqa: F403
from .objects.offer import *  # noqa: F403
from .objects.proof import *  # noqa: F403
from .objects.reads import *  # noqa: F403
from .objects.record import *  # noqa: F403
from .objects.session import *  # noqa: F403
from .objects.validation import *  # noqa: F403
from .quoting import QUOTE_MAX, clipped, counted, quoted
from .wire import Wire

__all__ = [
    "DEFAULT_DECIMAL_CONTEXT",
    "MAX_SAFE_INTEGER",
    "ORDER_FORMS",
    "PAYLOAD_TYPE",
    "PREDICATE_TYPE",
    "QUOTE_MAX",
    "STATEMENT_TYPE",
    "TRIALS_PREDICATE_TYPE",
    "CanonicalizationError",
    "DecimalStr",
    "KestrelError",
    "ProtocolModel",
    "Quantity",
    "Refusal",
    "RefusalCode",
    "RootMismatchError",
    "RootOfBytes",
    "RootStr",
    "SelfRooted",
    "Volume",
    "Wire",
    "canonical_json",
    "clipped",
    "counted",
    "decimal_context",
    "grade_facts",
    "grade_statement",
    "kestrel_home",
    "money",
    "order_form_lines",
    "pae",
    "quoted",
    "ratio",
    "root_of",
    "root_of_bytes",
    "to_json_value",
    "trials_statement",
]
__all__ += _attestation.__all__
__all__ += _blotter.__all__
__all__ += _catalog.__all__
__all__ += _grade.__all__
__all__ += _history.__all__
__all__ += _listing.__all__
__all__ += _news.__all__
__all__ += _news_item.__all__
__all__ += _offer.__all__
__all__ += _proof.__all__
__all__ += _reads.__all__
__all__ += _record.__all__
__all__ += _session.__all__
__all__ += _validation.__all__
