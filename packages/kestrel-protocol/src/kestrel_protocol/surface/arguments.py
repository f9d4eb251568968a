"""The argument models of the tools; their JSON Schemas are the tools' ``inputSchema``.

Unknown arguments are refused (``additionalProperties: false``): an agent that writes
``session_id`` for ``sessionId`` learns it at once instead of acting on a default.
Every string is :data:`~.text.Text` (or the stricter :data:`~.text.Label`, or
:data:`~.text.Id` for a session id, a scenario id or a root, :data:`~.text.Short` for
what ``/v1`` carries in a query), so the input rules are said here once for every face.
Every required argument that is a string or a number has an example (``examples=``,
shown in the schema): tests that call every tool derive their calls from them, so a new
tool needs no test edit.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ..objects.grade import GradeResult
from ..objects.session import Payment
from .text import Id, Label, Short, Text

__all__ = [
    "HISTORY_MAX",
    "NEWS_PAGE_MAX",
    "Arguments",
    "ArtifactArgs",
    "HistoryArgs",
    "NewsArgs",
    "NoArgs",
    "OpenArgs",
    "PaymentArgs",
    "ProofArgs",
    "ProofOfGradeArgs",
    "ResumeArgs",
    "ScenarioArgs",
    "SessionArgs",
    "SessionListArgs",
    "SubmitArgs",
    "ValidateArgs",
    "VerifyArgs",
]


_ROOT: Final = "sha256:" + "0" * 64
"""An example root (the form every root takes)."""


class Arguments(BaseModel):
    """Base of every tool's arguments: camelCase on the wire, strict, nothing extra."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,
        alias_generator=to_camel,
        validate_by_name=False,
        validate_by_alias=True,
    )

    def keywords(self) -> dict[str, Any]:
        """The arguments as the runtime's method takes them: by keyword, each field's
        name (its Python name) to its value (a new dict the caller may add to). Every
        SDK call reads them: a copy of the instance's attributes (a model holds its field
        values there, and these models nothing else) costs ~0.2 us where iterating the
        model costs ~9 us."""
        return vars(self).copy()


class NoArgs(Arguments):
    """No arguments."""


class ValidateArgs(Arguments):
    """Kestrel source to check, optionally against a scenario (symbols, ticks, lots)."""

    source: Text = Field(
        description="Kestrel source, one statement per line.", examples=["buy 10 ACME\nadvance 5"]
    )
    scenario: Id | None = Field(
        default=None,
        description="A scenario id; adds the symbol/tick/lot checks.",
        examples=["acme-trend"],
    )


class PaymentArgs(Arguments):
    """The payment for a gated open: the offer it answers and a voucher."""

    offer_id: Text = Field(description="The offerId of the Offer a gated open returned.")
    voucher: Text = Field(description="An operator-issued voucher (kv1.…).")

    def payment(self) -> Payment:
        return Payment(offer_id=self.offer_id, voucher=self.voucher)


class OpenArgs(Arguments):
    """Open (or, with the label of an open session, resume) a session."""

    scenario: Id = Field(
        description="A scenario id from the catalog, e.g. acme-trend.", examples=["acme-trend"]
    )
    label: Label | None = Field(
        default=None,
        examples=["momentum-1"],
        description=(
            "Names the session (1-64 printable characters); the same label resumes it. "
            "Omit for the next free one."
        ),
    )
    payment: PaymentArgs | None = Field(
        default=None, description="Only for a gated open: {offerId, voucher} for the offer."
    )

    def keywords(self) -> dict[str, Any]:
        payment = None if self.payment is None else self.payment.payment()
        return {"scenario": self.scenario, "label": self.label, "payment": payment}


class SessionArgs(Arguments):
    """A session by its id."""

    session_id: Id = Field(
        description="The sessionId the session open returned.",
        examples=["ks_p55breiebqsipqlkpirsfwserq"],
    )


HISTORY_MAX: Final = 1000
NEWS_PAGE_MAX: Final = 100
NEWS_PAGE_DEFAULT: Final = 20
"""The most bars one history call returns."""


class SessionListArgs(Arguments):
    """A page of the caller's sessions."""

    cursor: Short | None = Field(
        default=None, description="The nextCursor of the previous page; omit for the first."
    )


class HistoryArgs(SessionArgs):
    """The last bars of a session's tape, up to and including its clock bar."""

    bars: int = Field(
        ge=1,
        le=HISTORY_MAX,
        description=f"How many bars (1-{HISTORY_MAX}), ending with the clock bar.",
        examples=[20],
    )
    symbol: Short | None = Field(
        default=None, description="One symbol of the scenario; omit for every symbol."
    )


class NewsArgs(SessionArgs):
    """A page of the news items visible at a session's clock, newest last."""

    limit: int = Field(
        default=NEWS_PAGE_DEFAULT,
        ge=1,
        le=NEWS_PAGE_MAX,
        description=f"How many items (1-{NEWS_PAGE_MAX}), ending with the newest asked for.",
    )
    before: Short | None = Field(
        default=None,
        description="An item id (n12): only items older than it (nextBefore of a page).",
    )
    symbol: Short | None = Field(
        default=None, description="One symbol's items (and market-wide ones); omit for all."
    )


class SubmitArgs(SessionArgs):
    """Kestrel source applied atomically to a session."""

    source: Text = Field(
        description="Kestrel statements, one per line, e.g. 'buy 10 ACME\\nadvance 5'.",
        examples=["buy 10 ACME\nadvance 5"],
    )
    wait: float | None = Field(
        default=None,
        gt=0,
        le=300,
        description=(
            "On a forward scenario, seconds to wait for a bar not yet published before the "
            "submit is refused BAR_NOT_PUBLISHED (as 'advance 1 wait 30s' does); at most 300."
        ),
    )


class ProofArgs(SessionArgs):
    """A session's proof, optionally with its scenario and tape embedded."""

    embed_tape: bool = Field(
        default=False,
        description=(
            "Embed the scenario and its tape, so the proof verifies where the scenario is "
            "not shipped (a user scenario)."
        ),
    )


class ProofOfGradeArgs(Arguments):
    """The proof of a graded session, named by its grade."""

    grade_root: Id = Field(description="The grade's root, sha256:<hex>.", examples=[_ROOT])


class ResumeArgs(Arguments):
    """Continue a long operation."""

    token: Text = Field(
        description="The token of a kestrel.operation result.", examples=["opt_" + "0" * 64]
    )


class ScenarioArgs(Arguments):
    """A scenario by its id."""

    scenario: Id = Field(description="A scenario id from the catalog.", examples=["acme-trend"])


class ArtifactArgs(Arguments):
    """A stored object by its root."""

    root: Id = Field(description="The object's root, sha256:<hex>.", examples=[_ROOT])


class VerifyArgs(Arguments):
    """A grade to check by replaying its artifacts."""

    grade: GradeResult = Field(description="A kestrel.grade object, verbatim.")
