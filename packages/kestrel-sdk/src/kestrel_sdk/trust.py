"""Checking a door's signed statement about a proof's grade (``kestrel verify --trust``).

A replay proves a proof's arithmetic; what the agent could see (sealed or not, the
``no-lookahead`` outcome) is the claim of the runtime that served it, carried by the
door's signature (:mod:`kestrel_protocol.objects.attestation`). :func:`check_attestation`
takes the proof (already verified by replay, so its grade root is the replayed one) and
the trusted keys (a JWKS: the door's well-known URL, or a file): the envelope's
signature must verify under one of them, by a key the JWKS does not list as ``revoked``,
its subject must be the grade's root, and every fact of its predicate must equal the
proof's. Keys loaded by :func:`load_trusted_keys` remember their source: from a URL, the
statement's issuer must be the door at that URL (a statement claiming ``https://a``
fails against keys fetched from ``https://b``); a file names no issuer, and the source is
said beside the issuer the statement claims. The first thing that does not hold is
named.

A statement about a session on a forward scenario (``forward: true``) also carries the
order of events: every submission whose bar was published during the window must have
arrived before that bar was published (:func:`check_order`); the first that arrived once
it could be seen is named by its seq, and one that arrived while it was being published
(between the door's reads before and after the commit) is said unconfirmed. A session
that traded the tape only once it was complete (``forward: false``: a replay of
published bars) is said so; each of its submissions must then have arrived after its bar
was published. A statement whose signature fails is said so, and when the tampered
statement's own order names a submission, that one too.

Once its signature holds, a forward session's statement also says how many bars its tape
held when the door signed and the tape root of those bars (``edge``; a statement about a
forward session without both is not attested): a proof whose embedded tape holds fewer
had it cut after the session's last bar, one whose first bars up to the edge have
another root had bars of it swapped (``embedded.tape``, in the board's words).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from kestrel_protocol import (
    PAYLOAD_TYPE,
    PREDICATE_TYPE,
    STATEMENT_TYPE,
    Envelope,
    grade_facts,
    pae,
)
from kestrel_protocol.documents import parse_json, read_json

from .attested import Attested, NotAttested, statement_text
from .forward_edge import edge_mismatch, signed_edge
from .forward_order import check_order, order_of_tampered
from .runtime.verify import flatten

__all__ = [
    "Attested",
    "NotAttested",
    "TrustedKeys",
    "check_attestation",
    "check_order",
    "load_trusted_keys",
    "signed_issuer",
    "signed_payload",
    "signed_statement",
]

_METADATA = "/.well-known/oauth-protected-resource"


@dataclass(frozen=True, slots=True, eq=False)
class TrustedKeys(Mapping[str, Any]):
    """A JWKS (read as a mapping) and where it was loaded from."""

    jwks: Mapping[str, Any]
    source: str
    kind: Literal["URL", "file"]

    def __getitem__(self, key: str) -> Any:
        return self.jwks[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.jwks)

    def __len__(self) -> int:
        return len(self.jwks)

    def __str__(self) -> str:
        return f"{self.kind} {self.source}"

    def vouches_for(self, issuer: str) -> bool:
        """Whether ``issuer`` is the door these keys were fetched from: the URL itself,
        or the URL beneath it (its JWKS or metadata URL). A file vouches for no issuer
        and refuses none."""
        if self.kind == "file":
            return True
        source, claimed = _normal_url(self.source), _normal_url(issuer)
        return source == claimed or source.startswith(claimed + "/")


def _normal_url(url: str) -> str:
    """``url`` with its scheme and host lower-cased and no trailing slash."""
    parts = urlsplit(url.strip())
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{path}".rstrip("/")


def load_trusted_keys(source: str, client: httpx.Client | None = None) -> TrustedKeys:
    """The JWKS at ``source``: a file, a JWKS URL, or a door's URL (whose protected-
    resource metadata names its keys). ``ValueError`` naming what was wrong."""
    path = Path(source)
    if "://" not in source:
        try:
            return TrustedKeys(_jwks(read_json(path), source), source, "file")
        except ValueError as exc:
            raise ValueError(f"cannot read trusted keys from {source}: {exc}") from None
    own = client is None
    http = client if client is not None else httpx.Client(timeout=10.0)
    try:
        if urlsplit(source).path.strip("/"):  # a JWKS URL (or a metadata URL)
            data = _get(http, source)
        else:  # a door's address: its protected-resource metadata names its keys
            data = _get(http, source.rstrip("/") + _METADATA)
        if isinstance(data, dict) and "keys" not in data:
            named = data.get("kestrel_grade_keys_uri")
            if not isinstance(named, str):
                raise ValueError(f"{source} is neither a JWKS nor names kestrel_grade_keys_uri")
            data = _get(http, named)
        return TrustedKeys(_jwks(data, source), source, "URL")
    finally:
        if own:
            http.close()


def _get(http: httpx.Client, url: str) -> Any:
    try:
        response = http.get(url)
        response.raise_for_status()
        return parse_json(response.content)
    except (httpx.HTTPError, ValueError) as exc:
        raise ValueError(f"cannot fetch trusted keys from {url}: {exc}") from None


def _jwks(data: Any, source: str) -> dict[str, Any]:
    if not isinstance(data, dict) or not isinstance(data.get("keys"), list):
        raise ValueError(f"{source} is not a JWKS (an object with a keys list)")
    return data


def _b64(text: str, field: str, urlsafe: bool = False) -> bytes:
    """Base64 ``text``, only in its one canonical spelling (a changed padding bit would
    otherwise decode to the same bytes: the envelope must be the bytes signed)."""
    try:
        if urlsafe:
            data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            canonical = base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")
        else:
            data = base64.b64decode(text, validate=True)
            canonical = base64.b64encode(data).decode("ascii")
    except (binascii.Error, ValueError):
        raise NotAttested(field, "base64", text[:40]) from None
    if canonical != text:
        raise NotAttested(field, "canonical base64", text[:40])
    return data


def _public_key(jwks: Mapping[str, Any], kid: str) -> Ed25519PublicKey:
    revoked = jwks.get("revoked")
    for entry in revoked if isinstance(revoked, list) else []:
        if isinstance(entry, dict) and entry.get("kid") == kid:
            raise NotAttested(
                "attestation.signatures[0].keyid",
                "a key the trusted keys do not revoke",
                f"key {kid}, revoked at {entry.get('revokedAt')} ({_source_of(jwks)})",
            )
    for jwk in jwks["keys"]:
        if isinstance(jwk, dict) and jwk.get("kid") == kid:
            if jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
                raise NotAttested("attestation.signatures[0].keyid", "an Ed25519 key", kid)
            raw = _b64(str(jwk.get("x", "")), "jwk.x", urlsafe=True)
            try:
                return Ed25519PublicKey.from_public_bytes(raw)
            except ValueError:
                raise NotAttested("jwk.x", "a 32-byte Ed25519 public key", kid) from None
    raise NotAttested("attestation.signatures[0].keyid", "a key of the trusted JWKS", kid)


def signed_payload(proof: Mapping[str, Any], jwks: Mapping[str, Any]) -> tuple[bytes, str]:
    """The payload of ``proof``'s envelope (its ``attestation``: a proof's, or any signed
    answer of a door's) and the key id that signed it, once its
    signature verifies under a key of ``jwks`` it does not revoke; :class:`NotAttested`
    naming the first thing that does not hold."""
    if "attestation" not in proof:
        raise NotAttested("attestation", "a signed statement (a proof served by a door)", "none")
    try:
        envelope = Envelope.parse(proof["attestation"])
    except ValueError:
        raise NotAttested("attestation", "a DSSE envelope", "something else") from None
    if envelope.payload_type != PAYLOAD_TYPE:
        raise NotAttested("attestation.payloadType", PAYLOAD_TYPE, envelope.payload_type)
    if not envelope.signatures:
        raise NotAttested("attestation.signatures", "a signature", "none")
    signature = envelope.signatures[0]
    key = _public_key(jwks, signature.keyid)
    payload = _b64(envelope.payload, "attestation.payload")
    try:
        key.verify(_b64(signature.sig, "attestation.signatures[0].sig"), pae(PAYLOAD_TYPE, payload))
    except InvalidSignature:
        raise NotAttested(
            "attestation.signatures[0].sig",
            f"a signature by key {signature.keyid}",
            "a bad one" + order_of_tampered(payload, proof),
        ) from None
    return payload, signature.keyid


def signed_issuer(proof: Mapping[str, Any], jwks: Mapping[str, Any]) -> str | None:
    """The issuer ``proof``'s statement names when its signature holds under ``jwks`` (the
    door whose word it is), else ``None``; nothing else of it is checked here."""
    try:
        issuer = json.loads(signed_payload(proof, jwks)[0])["predicate"]["issuer"]
    except (NotAttested, ValueError, KeyError, TypeError):
        return None
    return issuer if isinstance(issuer, str) else None


def signed_statement(
    signed: Mapping[str, Any], jwks: Mapping[str, Any]
) -> tuple[Any, Any, Any, str]:
    """The in-toto statement of ``signed`` (a proof, or any signed answer of a door's) once
    its signature holds under ``jwks``: the statement, its predicate, its subject's sha256
    digest and the key id that signed; :class:`NotAttested` naming the first thing that
    does not hold."""
    payload, kid = signed_payload(signed, jwks)
    try:
        statement = json.loads(payload)
        predicate = statement["predicate"]
        digest = statement["subject"][0]["digest"]["sha256"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise NotAttested("attestation.payload", "an in-toto statement", "something else") from None
    return statement, predicate, digest, kid


def check_attestation(proof: Mapping[str, Any], jwks: Mapping[str, Any]) -> Attested:
    """Check ``proof``'s ``attestation`` under ``jwks``; who signed it, or
    :class:`NotAttested` naming the first thing that does not hold."""
    statement, predicate, digest, kid = signed_statement(proof, jwks)
    if statement.get("_type") != STATEMENT_TYPE:
        raise NotAttested("statement._type", STATEMENT_TYPE, str(statement.get("_type")))
    if statement.get("predicateType") != PREDICATE_TYPE:
        raise NotAttested(
            "statement.predicateType", PREDICATE_TYPE, str(statement.get("predicateType"))
        )
    grade_root = str(proof["grade"]["root"])
    if "sha256:" + str(digest) != grade_root:
        raise NotAttested(
            "statement.subject", f"the replayed grade {grade_root}", f"sha256:{digest}"
        )
    signed = dict(flatten({k: predicate.get(k) for k in grade_facts(proof)}))
    for path, value in flatten(grade_facts(proof)):
        if signed.get(path) != value:
            raise NotAttested(
                f"statement.predicate.{path}",
                f"{statement_text(value)} (the proof's)",
                f"{statement_text(signed.get(path))} (signed)",
            )
    issuer, principal = str(predicate.get("issuer")), predicate.get("principal")
    named = principal if isinstance(principal, str) and principal else None
    trial = predicate.get("trialOf")
    trial_of = trial if isinstance(trial, str) and trial else None
    trial_number = _trial_number(predicate, trial_of)
    trials_minted = _trials_minted(predicate, trial_number)
    order = check_order(predicate, proof)
    replay = predicate.get("forward") is False
    if isinstance(jwks, TrustedKeys) and not jwks.vouches_for(issuer):
        raise NotAttested(
            "statement.predicate.issuer",
            f"the door the keys were trusted from ({jwks})",
            f"{issuer} (claimed by the statement)",
        )
    if "forward" in predicate and signed_edge(proof) is None:
        raise NotAttested(
            "statement.predicate.edge",
            "the bars published and their tape root (sha256:…)",
            statement_text(predicate["edge"]) if "edge" in predicate else "none",
        )
    unlike = edge_mismatch(proof)  # the signature held: its edge is the door's word
    if unlike is not None:
        raise NotAttested("embedded.tape", "the forward tape as the door signed it", unlike)
    return Attested(
        issuer=issuer,
        kid=kid,
        source=str(jwks) if isinstance(jwks, TrustedKeys) else None,
        principal=named,
        trial_of=trial_of,
        trial_number=trial_number,
        trials_minted=trials_minted,
        decisions=None if order is None else order.decisions,
        unconfirmed=() if order is None else order.unconfirmed,
        replay=replay,
    )


def _trial_number(predicate: Mapping[str, Any], trial_of: str | None) -> int | None:
    """The statement's ``trialNumber`` (``None`` when it has none); :class:`NotAttested`
    when it is no whole number from 1, or it numbers no trial (no ``trialOf``)."""
    if "trialNumber" not in predicate:
        return None
    number = predicate["trialNumber"]
    if trial_of is None or not isinstance(number, int) or isinstance(number, bool) or number < 1:
        raise NotAttested(
            "statement.predicate.trialNumber",
            "a whole number from 1, beside trialOf",
            f"{statement_text(number)}" + ("" if trial_of is not None else " without trialOf"),
        )
    return number


def _trials_minted(predicate: Mapping[str, Any], trial_number: int | None) -> int | None:
    """The statement's ``trialsMinted`` (``None`` when it has none); :class:`NotAttested`
    when it is no whole number from ``trialNumber``, or there is no ``trialNumber``."""
    if "trialsMinted" not in predicate:
        return None
    minted = predicate["trialsMinted"]
    if (
        trial_number is None
        or not isinstance(minted, int)
        or isinstance(minted, bool)
        or minted < trial_number
    ):
        raise NotAttested(
            "statement.predicate.trialsMinted",
            "a whole number from trialNumber, beside trialOf and trialNumber",
            f"{statement_text(minted)}"
            + ("" if trial_number is not None else " without trialNumber"),
        )
    return minted


def _source_of(jwks: Mapping[str, Any]) -> str:
    return f"the trusted {jwks}" if isinstance(jwks, TrustedKeys) else "the trusted JWKS"
