"""``remote_transport``: the ``Transport`` port over a Kestrel door's ``/v1`` HTTP face.

It adds no semantics: ``invoke(tool, arguments)`` is one HTTP request built from the
tool's :class:`~kestrel_protocol.surface.Route` (the very route the door serves), and
each 2xx body is parsed into the tool's result object (so roots are verified on
arrival); each refusal body becomes a :class:`KestrelClientError` with the door's code,
message and detail. A 402 carrying an Offer is not an error: it is the gated result
(``SessionOpened(gated=True, payment=offer)``). A door that cannot be reached is the
refusal ``BACKEND_UNAVAILABLE``. Arguments were checked before they leave (by the
tool's model), so a bad label is ``INVALID_ARGUMENT`` here exactly as the door would
answer it. The bearer token goes in the ``Authorization`` header and nowhere else
(never into an error message).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from kestrel_protocol import ProtocolModel, RefusalCode, Wire
from kestrel_protocol.ports import Transport
from kestrel_protocol.surface import Arguments, Route, Tool

from ..door_token import API_TOKEN_ENV
from ..errors import KestrelClientError

if TYPE_CHECKING:
    import httpx

__all__ = ["RemoteTransport", "remote_transport"]

_DEFAULT_TIMEOUT_S = 60.0
_CONNECT_TIMEOUT_S = 5.0


def _seg(value: Any) -> str:
    return quote(str(value), safe="")


def _query_value(value: Any) -> str:
    if value is True or value is False:
        return "true" if value else "false"
    return str(value)


def _request(route: Route, arguments: Arguments) -> tuple[str, dict[str, Any] | None]:
    """The path (with its query) and the JSON body of a call on ``route``."""
    data = arguments.model_dump(mode="json", by_alias=True, exclude_unset=True)
    path = route.path
    for argument, param in route.params.items():
        path = path.replace("{" + param + "}", _seg(data.pop(argument, "")))
    query = {
        param: _query_value(data.pop(argument))
        for argument, param in route.query.items()
        if data.get(argument) is not None
    }
    if query:
        path += "?" + urlencode(query, quote_via=quote, safe="")
    return path, (data if route.body != "none" else None)


def _parse(tool: Tool, data: Any) -> ProtocolModel:
    """Parse (and so root-verify) a door's answer; one that does not fit is the door's fault."""
    model = tool.result_model(data)
    if model is None or not issubclass(model, ProtocolModel):
        raise KestrelClientError(
            RefusalCode.BACKEND_UNAVAILABLE,
            f"{tool.name} declares no result object to read the door's answer as",
            {"tool": tool.name},
        )
    try:
        return model.parse(data)
    except ValueError as exc:  # pydantic's ValidationError and RootMismatchError both are
        raise KestrelClientError(
            RefusalCode.BACKEND_UNAVAILABLE,
            f"the door's {model.__name__} did not verify: {str(exc).splitlines()[0]}",
            {"object": model.__name__},
        ) from None


class RemoteTransport:
    """A ``Transport`` speaking to ``base_url`` as whoever ``token`` names."""

    def __init__(
        self, base_url: str, token: str | None, client: httpx.AsyncClient | None = None
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._headers = {"Accept": "application/json"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        # httpx is imported here, not at module level: every ``import kestrel_sdk`` (the
        # CLI, kestrel-mcp, the door) loads this module, and only a remote transport needs
        # httpx (about 40 ms of start-up).
        import httpx  # noqa: PLC0415

        self._http_error = httpx.HTTPError
        self._owns_client = client is None
        if client is None:
            timeout = httpx.Timeout(_DEFAULT_TIMEOUT_S, connect=_CONNECT_TIMEOUT_S)
            client = httpx.AsyncClient(timeout=timeout)
        self._client = client

    def __repr__(self) -> str:  # never shows the token
        return f"RemoteTransport({self.base_url!r})"

    async def invoke(self, tool: Tool, arguments: Arguments) -> ProtocolModel | Wire[Any]:
        route = tool.route
        if route is None:
            raise KestrelClientError(
                RefusalCode.INVALID_ARGUMENT,
                f"{tool.name} has no /v1 route: a door does not serve it",
                {"tool": tool.name},
            )
        path, body = _request(route, arguments)
        try:
            resp = await self._client.request(
                route.method, self.base_url + path, json=body, headers=self._headers
            )
        except self._http_error as exc:
            raise KestrelClientError(
                RefusalCode.BACKEND_UNAVAILABLE,
                f"the Kestrel door at {self.base_url} is unreachable ({type(exc).__name__})",
                {"url": self.base_url},
            ) from None
        if route.media != "application/json":
            if resp.status_code >= 400:
                raise _refusal_error(resp, self.base_url)
            found = {a: v for a, v in _wire(arguments).items() if a in route.params}
            return _parse(tool, {**found, "mediaType": route.media, "text": resp.text})
        if resp.status_code == 402 and _is_offer(resp):
            return _parse(tool, {"gated": True, "payment": _decode(resp, path)})
        if resp.status_code >= 400:
            raise _refusal_error(resp, self.base_url)
        return _parse(tool, _decode(resp, path))

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()


def _wire(arguments: Arguments) -> Mapping[str, Any]:
    return arguments.model_dump(mode="json", by_alias=True, exclude_unset=True)


def _decode(resp: httpx.Response, path: str) -> Any:
    try:
        return resp.json()
    except ValueError:
        raise KestrelClientError(
            RefusalCode.BACKEND_UNAVAILABLE,
            f"the door answered {path} with a body that is not JSON",
            {"status": resp.status_code},
        ) from None


def _is_offer(resp: httpx.Response) -> bool:
    try:
        data = resp.json()
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("kind") == "kestrel.offer"


def _refusal_error(resp: httpx.Response, base_url: str) -> KestrelClientError:
    try:
        data = resp.json()
    except ValueError:
        data = None
    refusal = data.get("refusal") if isinstance(data, dict) else None
    if isinstance(refusal, dict) and isinstance(refusal.get("code"), str) and refusal["code"]:
        detail = refusal.get("detail")
        return KestrelClientError(
            refusal["code"],
            str(refusal.get("message", "")),
            detail if isinstance(detail, dict) else {},
        )
    status = resp.status_code
    if status in (401, 403):
        return KestrelClientError(
            RefusalCode.FORBIDDEN,
            f"the door at {base_url} refused the credential (HTTP {status})",
            {"status": status},
        )
    return KestrelClientError(
        RefusalCode.BACKEND_UNAVAILABLE,
        f"the door at {base_url} answered HTTP {status}",
        {"status": status},
    )


def remote_transport(
    base_url: str | None = None,
    token: str | None = None,
    client: httpx.AsyncClient | None = None,
) -> Transport:
    """A transport to a door at ``base_url`` (default ``$KESTREL_REMOTE``).

    ``token`` defaults to ``$KESTREL_API_TOKEN`` (the command lines' ``--remote`` also
    looks in the secret store: :func:`~kestrel_sdk.door_token.door_token`).
    Pass ``client`` to share connection pools (it is then not closed by ``aclose``).
    """
    url = base_url or os.environ.get("KESTREL_REMOTE")
    if not url:
        raise ValueError("remote_transport needs base_url (or KESTREL_REMOTE)")
    if token is None:
        token = os.environ.get(API_TOKEN_ENV)
    return RemoteTransport(url, token, client)
