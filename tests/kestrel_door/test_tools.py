from __future__ import annotations

import json

from kestrel_protocol import KestrelError, Refusal, RefusalCode
from kestrel_protocol.surface import refusal_result, result_refusal, tool_result


def test_a_refusal_result_reads_back_as_its_refusal() -> None:
    refusal = Refusal(code=RefusalCode.FORBIDDEN, message="no", detail={"requiredScope": "s"})
    result = refusal_result(refusal)
    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert result_refusal(result) == refusal.to_json()
    assert result_refusal(refusal_result(KestrelError("UNKNOWN_SCENARIO", "x"))) == {
        "code": "UNKNOWN_SCENARIO",
        "message": "x",
        "detail": {},
    }


def test_a_successful_or_malformed_result_has_no_refusal() -> None:
    assert result_refusal(tool_result({"refusal": {"code": "X"}})) is None
    assert result_refusal({"isError": True, "structuredContent": "text"}) is None
    assert result_refusal({"isError": True, "structuredContent": {"refusal": "X"}}) is None
    assert result_refusal({"isError": True}) is None
