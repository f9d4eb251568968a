"""``remote_transport``: the ``Transport`` port over a Kestrel door's ``/v1`` HTTP face.

It adds no semantics: each method is one HTTP request, each 2xx body is parsed into the
protocol object it is (so roots are verified on arrival), and each refusal body
becomes a :class:`KestrelClientError` with the door's code, message and detail. A 402
carrying an Offer is not an error: it is ``SessionOpened(gated=True, payment=offer)``.
A door that cannot be reached is the refusal ``BACKEND_UNAVAILABLE``. Arguments are
checked before they leave (``checks``): a bad label is ``INVALID_ARGUMENT`` here exactly
as the door would answer it. The bearer token
goes in the ``Authorization`` header and nowhere else (never into an error message).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

from kestrel_protocol import (
    Blotter,
    Catalog,
    Delivery,
    GradeResult,
    History,
    Offer,
    OperationResumption,
    Payment,
    Proof,
    ProtocolModel,
    RefusalCode,
    Scenario,
    SealedScenario,
    SessionOpened,
    SessionRecord,
    SessionResponse,
    ValidationReport,
    VerificationReport,
)
from kestrel_protocol.ports import Transport

from ..errors import KestrelClientError
from .checks import CHECK

if TYPE_CHECKING:
    import httpx

__all__ = ["RemoteTransport", "remote_transport"]

_DEFAULT_TIMEOUT_S = 60.0
_CONNECT_TIMEOUT_S = 5.0


def _seg(value: str) -> str:
    return quote(value, safe="")


M = TypeVar("M", bound=ProtocolModel)


def _parse(model: type[M], data: Any) -> M:
    """Parse (and so root-verify) a door's answer; one that does not fit is the door's fault."""
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

    async def _send(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        gated_ok: bool = False,
    ) -> httpx.Response:
        try:
            resp = await self._client.request(
                method, self.base_url + path, json=json, headers=self._headers
            )
        except self._http_error as exc:
            raise KestrelClientError(
                RefusalCode.BACKEND_UNAVAILABLE,
                f"the Kestrel door at {self.base_url} is unreachable ({type(exc).__name__})",
                {"url": self.base_url},
            ) from None
        if resp.status_code < 400 or (gated_ok and resp.status_code == 402 and _is_offer(resp)):
            return resp
        raise _refusal_error(resp, self.base_url)

    async def _json(self, method: str, path: str, body: Any = None) -> Any:
        return _decode(await self._send(method, path, json=body), path)

    async def catalog(self) -> Catalog:
        return _parse(Catalog, await self._json("GET", "/v1/catalog"))

    async def scenario(self, scenario_id: str) -> Scenario | SealedScenario:
        CHECK["scenario"](scenario=scenario_id)
        data = await self._json("GET", f"/v1/catalog/scenarios/{_seg(scenario_id)}")
        if isinstance(data, dict) and data.get("kind") == "kestrel.sealed-scenario":
            return _parse(SealedScenario, data)
        return _parse(Scenario, data)

    async def tape(self, scenario_id: str) -> str:
        CHECK["tape"](scenario=scenario_id)
        resp = await self._send("GET", f"/v1/catalog/scenarios/{_seg(scenario_id)}/tape")
        return resp.text

    async def validate(self, source: str, scenario: str | None = None) -> ValidationReport:
        CHECK["validate"](source=source, scenario=scenario)
        body: dict[str, Any] = {"source": source}
        if scenario is not None:
            body["scenario"] = scenario
        return _parse(ValidationReport, await self._json("POST", "/v1/validate", body))

    async def open_session(
        self, scenario: str, label: str | None = None, payment: Payment | None = None
    ) -> SessionOpened:
        CHECK["open_session"](
            scenario=scenario,
            label=label,
            payment=None if payment is None else payment.to_json(),
        )
        body: dict[str, Any] = {"scenario": scenario}
        if label is not None:
            body["label"] = label
        if payment is not None:
            body["payment"] = payment.to_json()
        resp = await self._send("POST", "/v1/sessions", json=body, gated_ok=True)
        if resp.status_code == 402:
            return SessionOpened(gated=True, payment=_parse(Offer, _decode(resp, "/v1/sessions")))
        return _parse(SessionOpened, _decode(resp, "/v1/sessions"))

    async def submit(self, session_id: str, source: str) -> SessionResponse:
        CHECK["submit"](session_id=session_id, source=source)
        data = await self._json(
            "POST", f"/v1/sessions/{_seg(session_id)}/submit", {"source": source}
        )
        return _parse(SessionResponse, data)

    async def frame(self, session_id: str) -> Delivery:
        CHECK["frame"](session_id=session_id)
        return _parse(Delivery, await self._json("GET", f"/v1/sessions/{_seg(session_id)}/frame"))

    async def history(self, session_id: str, bars: int, symbol: str | None = None) -> History:
        CHECK["history"](session_id=session_id, bars=bars, symbol=symbol)
        query = f"?bars={bars}" + ("" if symbol is None else f"&symbol={_seg(symbol)}")
        path = f"/v1/sessions/{_seg(session_id)}/history{query}"
        return _parse(History, await self._json("GET", path))

    async def blotter(self, session_id: str) -> Blotter:
        CHECK["blotter"](session_id=session_id)
        return _parse(Blotter, await self._json("GET", f"/v1/sessions/{_seg(session_id)}/blotter"))

    async def close(self, session_id: str) -> SessionRecord:
        CHECK["close"](session_id=session_id)
        return _parse(
            SessionRecord, await self._json("POST", f"/v1/sessions/{_seg(session_id)}/close")
        )

    @staticmethod
    def _graded(data: Any) -> GradeResult | OperationResumption:
        if isinstance(data, dict) and data.get("kind") == "kestrel.operation":
            return _parse(OperationResumption, data)
        return _parse(GradeResult, data)

    async def grade(self, session_id: str) -> GradeResult | OperationResumption:
        CHECK["grade"](session_id=session_id)
        return self._graded(await self._json("POST", f"/v1/sessions/{_seg(session_id)}/grade"))

    async def resume(self, token: str) -> GradeResult | OperationResumption:
        CHECK["resume"](token=token)
        return self._graded(await self._json("POST", "/v1/operations/resume", {"token": token}))

    async def artifact(self, root: str) -> dict[str, Any]:
        CHECK["artifact"](root=root)
        data = await self._json("GET", f"/v1/artifacts/{_seg(root)}")
        if not isinstance(data, dict):
            raise KestrelClientError(
                RefusalCode.BACKEND_UNAVAILABLE,
                "the door returned an artifact that is not an object",
            )
        return data

    async def verify(self, grade: GradeResult) -> VerificationReport:
        data = await self._json("POST", "/v1/verify", {"grade": grade.to_json()})
        return _parse(VerificationReport, data)

    async def proof(self, session_id: str, embed_tape: bool = False) -> Proof:
        CHECK["proof"](session_id=session_id, embed_tape=embed_tape)
        path = f"/v1/sessions/{_seg(session_id)}/proof" + ("?embedTape=true" if embed_tape else "")
        return _parse(Proof, await self._json("GET", path))

    async def proof_of_grade(self, grade_root: str) -> Proof:
        CHECK["proof_of_grade"](grade_root=grade_root)
        return _parse(Proof, await self._json("GET", f"/v1/proofs/{_seg(grade_root)}"))

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()


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

    ``token`` defaults to ``$KESTREL_API_TOKEN``.
    Pass ``client`` to share connection pools (it is then not closed by ``aclose``).
    """
    url = base_url or os.environ.get("KESTREL_REMOTE")
    if not url:
        raise ValueError("remote_transport needs base_url (or KESTREL_REMOTE)")
    if token is None:
        token = os.environ.get("KESTREL_API_TOKEN")
    return RemoteTransport(url, token, client)
