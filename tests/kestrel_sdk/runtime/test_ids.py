from __future__ import annotations

import base64
import hashlib
import re

import rfc8785
from kestrel_sdk.runtime.ids import operation_id, session_id


def test_session_id_is_spec_formula() -> None:
    root = "sha256:" + "ab" * 32
    body = rfc8785.dumps({"principal": "local", "scenarioRoot": root, "label": "1"})
    expected = "ks_" + base64.b32encode(hashlib.sha256(body).digest()).decode().lower()[:26]
    assert session_id("local", root, "1") == expected
    assert re.fullmatch(r"ks_[a-z2-7]{26}", expected)


def test_session_ids_differ_by_principal_label_and_scenario() -> None:
    root = "sha256:" + "ab" * 32
    ids = {
        session_id("local", root, "1"),
        session_id("other", root, "1"),
        session_id("local", root, "2"),
        session_id("local", "sha256:" + "cd" * 32, "1"),
    }
    assert len(ids) == 4


def test_operation_id_is_deterministic_and_bound_to_principal() -> None:
    rec = "sha256:" + "12" * 32
    assert operation_id("a", rec) == operation_id("a", rec)
    assert operation_id("a", rec) != operation_id("b", rec)
    assert operation_id("a", rec).startswith("op_")
