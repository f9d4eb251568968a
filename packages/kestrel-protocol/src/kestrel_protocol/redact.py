"""Store URLs and DSNs with their secrets replaced: the one redaction every face uses.

A store setting may carry a password in every form libpq (and so psycopg) accepts: in
a URL's userinfo (``postgresql://user:pw@host/db``, the password possibly holding an
unencoded ``@ / # ? %``), as a URL query member (``?password=pw``, ``sslpassword``), or
as a ``key=value`` connection string (``host=db password=pw``, the value possibly
single-quoted with backslash escapes). :func:`redact_store_url` returns the text with
each of those values replaced by ``***``; when in doubt it hides more, never less.
:func:`scrub` removes a DSN's secrets from any other text (a driver's error message).
"""

from __future__ import annotations

import re
from urllib.parse import unquote

__all__ = ["HIDDEN", "redact_store_url", "scrub", "secrets_of", "unencoded_in_password"]

HIDDEN = "***"

_SECRET_KEYS = frozenset({"password", "sslpassword"})
# libpq's connection parameters: a secret query value runs to the next ``&`` that starts
# one of these (an unencoded ``&`` inside the password is hidden with it).
_LIBPQ_KEYS = frozenset(
    [
        "host",
        "hostaddr",
        "port",
        "dbname",
        "user",
        "password",
        "passfile",
        "require_auth",
        "channel_binding",
        "connect_timeout",
        "client_encoding",
        "options",
        "application_name",
        "fallback_application_name",
        "keepalives",
        "keepalives_idle",
        "keepalives_interval",
        "keepalives_count",
        "tcp_user_timeout",
        "replication",
        "gssencmode",
        "sslmode",
        "requiressl",
        "sslnegotiation",
        "sslcompression",
        "sslcert",
        "sslkey",
        "sslcertmode",
        "sslpassword",
        "sslrootcert",
        "sslcrl",
        "sslcrldir",
        "sslsni",
        "requirepeer",
        "ssl_min_protocol_version",
        "ssl_max_protocol_version",
        "krbsrvname",
        "gsslib",
        "gssdelegation",
        "service",
        "target_session_attrs",
        "load_balance_hosts",
    ]
)
_SCHEME = re.compile(r"^\s*[A-Za-z][A-Za-z0-9+.-]*://")
_QUERY_MEMBER = re.compile(r"(?:^|&)([A-Za-z_][A-Za-z0-9_]*)=")
_KEYWORD = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*")


def redact_store_url(text: str) -> str:
    """``text`` (a store URL, a libpq ``key=value`` string, or anything a user typed as
    one) with every password replaced by ``***``."""
    if _SCHEME.match(text):
        return _redact_url(text)
    if "=" in text:
        return _redact_keywords(text)[0]
    return text


def secrets_of(text: str) -> list[str]:
    """The secret values ``text`` carries, as written and percent-decoded (longest first)."""
    if _SCHEME.match(text):
        found = _url_secrets(text)
    elif "=" in text:
        found = _redact_keywords(text)[1]
    else:
        found = []
    values = {v for s in found if s for v in (s, unquote(s))}
    return sorted((v for v in values if v), key=len, reverse=True)


def scrub(message: str, dsn: str) -> str:
    """``message`` with ``dsn`` shown redacted and every secret of it replaced by ``***``."""
    out = message.replace(dsn, redact_store_url(dsn)) if dsn else message
    for secret in secrets_of(dsn):
        out = out.replace(secret, HIDDEN)
    return out


def unencoded_in_password(url: str) -> str | None:
    """The first character libpq would misread in a URL's userinfo password (an
    unencoded ``@`` or ``/``, or a ``%`` not starting an escape), else ``None``."""
    if not _SCHEME.match(url):
        return None
    _, _, password, _ = _split_url(url)
    for n, char in enumerate(password or ""):
        if char in "@/":
            return char
        if char == "%" and not re.fullmatch(r"[0-9A-Fa-f]{2}", (password or "")[n + 1 : n + 3]):
            return char
    return None


# -- URLs ---------------------------------------------------------------------------------


def _split_url(text: str) -> tuple[str, str | None, str | None, str]:
    """(scheme and ``//``, user, password, the rest after the userinfo).

    The userinfo runs to the *last* ``@``: a password may hold an unencoded ``@`` (and
    ``/ # ? %``), and hiding too much of a malformed URL is better than too little.
    """
    start = _SCHEME.match(text)
    assert start is not None
    head, rest = text[: start.end()], text[start.end() :]
    at = rest.rfind("@")
    if at < 0:
        return head, None, None, rest
    userinfo, after = rest[:at], rest[at + 1 :]
    user, colon, password = userinfo.partition(":")
    return head, user, (password if colon else None), after


def _url_secrets(text: str) -> list[str]:
    _, _, password, after = _split_url(text)
    found = [password] if password else []
    _, _, query = after.partition("?")
    for _, value in _query_secrets(query):
        found.append(value)
    return found


def _query_secrets(query: str) -> list[tuple[int, str]]:
    """(offset, value) of each secret member of a query string. A secret's value runs to
    the next ``&`` that starts a libpq parameter (an unencoded ``&`` inside it stays
    hidden)."""
    members = list(_QUERY_MEMBER.finditer(query))
    found = []
    for n, member in enumerate(members):
        if member.group(1).lower() in _SECRET_KEYS:
            end = len(query)
            for later in members[n + 1 :]:
                if later.group(1).lower() in _LIBPQ_KEYS:
                    end = later.start()
                    break
            found.append((member.end(), query[member.end() : end]))
    return found


def _redact_url(text: str) -> str:
    head, user, password, after = _split_url(text)
    if user is not None:
        head += user + (":" + HIDDEN if password is not None else "") + "@"
    base, question, query = after.partition("?")
    if question:
        pieces, last = [], 0
        for offset, value in _query_secrets(query):
            pieces += [query[last:offset], HIDDEN]
            last = offset + len(value)
        query = "".join(pieces) + query[last:]
    return head + base + question + query


# -- key=value connection strings ----------------------------------------------------------


def _redact_keywords(text: str) -> tuple[str, list[str]]:
    """The string with secret values hidden, and those values; anything after a value
    that cannot be parsed is hidden too (libpq would refuse the string anyway)."""
    out, found, pos = [], [], 0
    while pos < len(text):
        keyword = _KEYWORD.match(text, pos)
        if keyword is None:
            rest = text[pos:]
            if rest.strip():
                out.append(text[pos : pos + len(rest) - len(rest.lstrip())] + HIDDEN)
                found.append(rest.strip())
            else:
                out.append(rest)
            break
        value_start = keyword.end()
        value_end = _value_end(text, value_start)
        value = text[value_start:value_end]
        secret = keyword.group(1).lower() in _SECRET_KEYS
        out.append(text[pos:value_start])
        out.append(HIDDEN if secret else value)
        if secret:
            found.append(_unquote_value(value))
            found.append(value)
        pos = value_end
    return "".join(out), found


def _value_end(text: str, start: int) -> int:
    """Where a libpq value starting at ``start`` ends: a quoted value at its closing
    quote (``\\'`` and ``\\\\`` escaped), else at whitespace (backslash escapes)."""
    n = start
    quoted = n < len(text) and text[n] == "'"
    if quoted:
        n += 1
    while n < len(text):
        char = text[n]
        if char == "\\":
            n += 2
            continue
        if quoted and char == "'":
            return n + 1
        if not quoted and char.isspace():
            return n
        n += 1
    return len(text)


def _unquote_value(value: str) -> str:
    if value.startswith("'"):
        value = value[1:-1] if value.endswith("'") and len(value) > 1 else value[1:]
    return re.sub(r"\\(.)", r"\1", value)
