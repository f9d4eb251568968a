"""JSON-RPC 2.0: requests, notifications, responses and errors told apart precisely."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kestrel_protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    JsonRpcError,
    JsonRpcErrorResponse,
    JsonRpcNotification,
    JsonRpcProtocolError,
    JsonRpcRequest,
    JsonRpcResult,
    error_response,
    parse_message,
    parse_message_text,
    readable_id,
)


def test_json_rpc_error_codes() -> None:
    assert (PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR) == (
        -32700,
        -32600,
        -32601,
        -32602,
        -32603,
    )


@pytest.mark.parametrize("request_id", [1, 0, -7, "abc", ""])
def test_a_message_with_an_id_and_a_method_is_a_request(request_id: int | str) -> None:
    data = {"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": {"cursor": "x"}}
    message = parse_message(data)
    assert message == JsonRpcRequest(request_id, "tools/list", {"cursor": "x"})
    assert message.to_json() == data


def test_a_message_without_an_id_member_is_a_notification() -> None:
    data = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    message = parse_message(data)
    assert message == JsonRpcNotification("notifications/initialized")
    assert message.to_json() == data


def test_params_may_be_an_array() -> None:
    message = parse_message({"jsonrpc": "2.0", "id": 3, "method": "sum", "params": [1, 2]})
    assert message == JsonRpcRequest(3, "sum", [1, 2])


def test_id_null_on_a_request_is_invalid() -> None:
    with pytest.raises(JsonRpcProtocolError) as caught:
        parse_message({"jsonrpc": "2.0", "id": None, "method": "ping"})
    assert caught.value.code == INVALID_REQUEST
    assert "null" in caught.value.message
    assert caught.value.request_id is None


@pytest.mark.parametrize("bad_id", [True, 1.5, [1], {"a": 1}])
def test_ids_must_be_strings_or_integers(bad_id: Any) -> None:
    with pytest.raises(JsonRpcProtocolError) as caught:
        parse_message({"jsonrpc": "2.0", "id": bad_id, "method": "ping"})
    assert caught.value.code == INVALID_REQUEST
    assert '"id"' in caught.value.message


def test_a_result_response() -> None:
    data = {"jsonrpc": "2.0", "id": "r1", "result": {"tools": []}}
    message = parse_message(data)
    assert message == JsonRpcResult("r1", {"tools": []})
    assert message.to_json() == data


def test_an_error_response_with_data() -> None:
    data = {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": -32002, "message": "Resource not found", "data": {"uri": "x://y"}},
    }
    message = parse_message(data)
    assert message == JsonRpcErrorResponse(
        4, JsonRpcError(-32002, "Resource not found", {"uri": "x://y"})
    )
    assert message.to_json() == data


def test_an_error_response_to_an_unreadable_request_has_id_null() -> None:
    response = error_response(None, PARSE_ERROR, "parse error")
    data = response.to_json()
    assert data == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "parse error"},
    }
    assert parse_message(data) == response  # our own output parses back


@pytest.mark.parametrize(
    "data",
    [
        {"jsonrpc": "2.0", "id": 1},  # neither method nor result nor error
        {"jsonrpc": "2.0", "result": {}},  # a result needs an id
        {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": True, "message": "m"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -1}},
        {"jsonrpc": "2.0", "id": 1, "error": "boom"},
        {"jsonrpc": "2.0", "error": {"code": -1, "message": "m"}},  # the id member is required
    ],
)
def test_malformed_responses_are_invalid(data: dict[str, Any]) -> None:
    with pytest.raises(JsonRpcProtocolError) as caught:
        parse_message(data)
    assert caught.value.code == INVALID_REQUEST


def test_batch_arrays_are_refused() -> None:
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}]
    with pytest.raises(JsonRpcProtocolError) as caught:
        parse_message(batch)
    assert caught.value.code == -32600
    assert "batch" in caught.value.message
    with pytest.raises(JsonRpcProtocolError, match="batch"):
        parse_message_text(json.dumps(batch))


@pytest.mark.parametrize("data", ["ping", 42, None, True])
def test_a_message_must_be_an_object(data: Any) -> None:
    with pytest.raises(JsonRpcProtocolError) as caught:
        parse_message(data)
    assert caught.value.code == INVALID_REQUEST
    assert "object" in caught.value.message


@pytest.mark.parametrize("version", ["1.0", 2.0, None, "2"])
def test_jsonrpc_member_must_be_2_0(version: Any) -> None:
    with pytest.raises(JsonRpcProtocolError) as caught:
        parse_message({"jsonrpc": version, "id": 9, "method": "ping"})
    assert caught.value.code == INVALID_REQUEST
    assert '"jsonrpc"' in caught.value.message
    assert caught.value.request_id == 9  # readable, so the error response can name it
    assert caught.value.to_response().to_json()["id"] == 9


def test_missing_jsonrpc_member_is_invalid() -> None:
    with pytest.raises(JsonRpcProtocolError, match="jsonrpc"):
        parse_message({"id": 1, "method": "ping"})


@pytest.mark.parametrize("params", ["x", 1, None, True])
def test_params_must_be_an_object_or_an_array(params: Any) -> None:
    with pytest.raises(JsonRpcProtocolError) as caught:
        parse_message({"jsonrpc": "2.0", "id": "p", "method": "tools/call", "params": params})
    assert caught.value.code == INVALID_REQUEST
    assert '"params"' in caught.value.message
    assert caught.value.request_id == "p"


@pytest.mark.parametrize("method", ["", 5, None])
def test_method_must_be_a_non_empty_string(method: Any) -> None:
    with pytest.raises(JsonRpcProtocolError, match='"method"'):
        parse_message({"jsonrpc": "2.0", "id": 1, "method": method})


@pytest.mark.parametrize("raw", ["{", "", "not json", b"\xff\xfe", '{"jsonrpc": "2.0",}'])
def test_undecodable_text_is_a_parse_error(raw: str | bytes) -> None:
    with pytest.raises(JsonRpcProtocolError) as caught:
        parse_message_text(raw)
    assert caught.value.code == PARSE_ERROR
    response = caught.value.to_response().to_json()
    assert response["id"] is None
    assert response["error"]["code"] == -32700


def test_text_is_decoded_then_classified() -> None:
    message = parse_message_text(b'{"jsonrpc":"2.0","id":7,"method":"ping"}')
    assert message == JsonRpcRequest(7, "ping")
    with pytest.raises(JsonRpcProtocolError) as caught:
        parse_message_text('{"jsonrpc":"2.0","id":null,"method":"ping"}')
    assert caught.value.code == INVALID_REQUEST


def test_messages_are_immutable() -> None:
    request = JsonRpcRequest(1, "ping")
    with pytest.raises(AttributeError):
        request.method = "other"  # type: ignore[misc]


def test_readable_id_echoes_only_string_or_integer_ids() -> None:
    assert readable_id({"id": 7}) == 7
    assert readable_id({"id": "a"}) == "a"
    assert readable_id({"id": True}) is None
    assert readable_id({"id": None}) is None
    assert readable_id({"id": 1.5}) is None
    assert readable_id({"id": [1]}) is None
    assert readable_id({}) is None
    assert readable_id([{"id": 1}]) is None
