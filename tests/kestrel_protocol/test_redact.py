"""One redaction for store URLs and DSNs: every form psycopg accepts loses its password,
and nothing else a reader needs (host, database, options) is lost."""

from __future__ import annotations

from urllib.parse import unquote

import pytest
from kestrel_protocol.outage import driver_reason
from kestrel_protocol.redact import redact_store_url, scrub, unencoded_in_password
from kestrel_protocol.store import store_location

psycopg = pytest.importorskip("psycopg")
from psycopg.conninfo import conninfo_to_dict  # noqa: E402

# (what the operator typed, what is shown); every row is a string psycopg accepts.
TABLE = [
    ("postgresql://kestrel:s3cret@db:5432/kestrel", "postgresql://kestrel:***@db:5432/kestrel"),
    ("postgres://kestrel:s3cret@db/kestrel", "postgres://kestrel:***@db/kestrel"),
    ("postgresql://u:p?x#y@h:5/db", "postgresql://u:***@h:5/db"),  # unencoded ? and #
    ("postgresql://u:p%40s%2F%25@h/db", "postgresql://u:***@h/db"),  # encoded @ / %
    (
        "postgresql://u:pw@h1:5,h2:6/db?sslmode=require",
        "postgresql://u:***@h1:5,h2:6/db?sslmode=require",
    ),
    ("postgresql://u:@h/db", "postgresql://u:***@h/db"),
    ("postgresql://u@h/db?password=hunter2", "postgresql://u@h/db?password=***"),
    (
        "postgresql://u@h/db?password=a%26b&sslmode=disable",
        "postgresql://u@h/db?password=***&sslmode=disable",
    ),
    (
        "postgresql://h/db?sslpassword=zz&password=yy&application_name=k",
        "postgresql://h/db?sslpassword=***&password=***&application_name=k",
    ),
    ("postgresql:///db?host=/run/pg&password=zz", "postgresql:///db?host=/run/pg&password=***"),
    ("host=db password=hunter2 dbname=k", "host=db password=*** dbname=k"),
    ("host = db  password = hunter2", "host = db  password = ***"),
    ("host=h password='a b\\' c' dbname=d", "host=h password=*** dbname=d"),
    ("host=h password=x\\ y user=u", "host=h password=*** user=u"),
    ("password=onlyme", "password=***"),
    ("postgresql://u@h/db", "postgresql://u@h/db"),  # nothing secret: unchanged
    ("host=db dbname=k", "host=db dbname=k"),
]


@pytest.mark.parametrize(("typed", "shown"), TABLE)
def test_every_form_psycopg_accepts_is_shown_without_its_password(typed: str, shown: str) -> None:
    parsed = conninfo_to_dict(typed)  # psycopg accepts it ...
    assert redact_store_url(typed) == shown  # ... and the operator sees this
    for key in ("password", "sslpassword"):
        secret = str(parsed.get(key) or "")
        if secret:
            assert secret not in shown
            assert unquote(secret) not in shown
    for key in ("host", "dbname"):
        if parsed.get(key) and key in typed:
            assert str(parsed[key]) in shown


def test_a_printed_location_and_every_refusal_of_a_store_url_hide_the_password() -> None:
    env = {"KESTREL_HOME": "/srv/k"}
    assert str(store_location("postgresql://u:p?x#y@h/db", env=env)) == "postgresql://u:***@h/db"
    kv = store_location("host=db password=hunter2 dbname=k", env=env)
    assert (kv.kind, str(kv)) == ("postgresql", "host=db password=*** dbname=k")
    for bad in ("mysql://u:hunter2@db/k", "postgresql://u:hun@ter2@db/k", "postgresql://u:a/b@h/d"):
        with pytest.raises(ValueError, match="store URL") as raised:
            store_location(bad, env=env)
        assert "hunter2" not in str(raised.value)
        assert "ter2" not in str(raised.value)
        assert "a/b" not in str(raised.value)
    with pytest.raises(ValueError, match=r"unencoded '@'; percent-encode it \('@' is %40\)"):
        store_location("postgresql://u:hun@ter2@db/k", env=env)
    assert unencoded_in_password("postgresql://u:50%off@h/d") == "%"
    assert unencoded_in_password("postgresql://u:50%25off@h/d") is None


def test_a_driver_error_reaches_the_operator_scrubbed() -> None:
    dsn = "host=127.0.0.1 port=1 password='a b' dbname=k"
    with pytest.raises(psycopg.Error) as parse_error:
        psycopg.connect("host=h password=a b")  # libpq quotes the "b" it choked on
    reason = driver_reason(parse_error.value, "host=h password=a b")
    assert '"b"' not in reason
    assert reason.startswith("ProgrammingError: ")
    assert scrub(f"could not connect with {dsn}: password a b refused", dsn) == (
        "could not connect with host=127.0.0.1 port=1 password=*** dbname=k: password *** refused"
    )
