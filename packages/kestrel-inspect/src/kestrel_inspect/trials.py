"""Trials: each run of the agent (one sample in one epoch) trades as a principal of its own.

Kestrel keeps one horizon per principal and scenario: a session fails ``no-lookahead``
when another session of the same principal had already been shown later bars. That is
what stops an agent scouting a tape under one identity and trading it under another it
controls, and it is why ``--epochs N`` on one identity would make the runs fail one
another. So the harness (never the agent) gives each run its own principal, named from
the sample, the epoch and the sample's run (``trial-SAMPLE-eEPOCH-UUID`` under a parent,
``-rN`` on the Nth attempt of a retried sample):

- locally, ``kestrel-mcp --principal local/trial-… --scenario ID`` per sample (the
  agent's tools cannot change a process's principal, nor see another scenario);
- through a door, the evaluator's token (scope ``kestrel:trials``) mints the trial at
  ``POST /v1/trials`` with ``scenarios: [ID]``: a new token for ``PARENT/trial-…``
  holding the parent's tool scopes and never ``kestrel:trials``, seeing and trading only
  the sample's scenario, which the agent's MCP connection then uses; the harness revokes
  it when the sample is scored.

A trial sees only its sample's scenario, so a pair's disguised sample cannot list the
catalog, find its labelled twin and open it at its own bar (matching returns, it would
learn the real name and dates and pass ``no-lookahead`` all the same).

A trial's bearer lives in this process only (never in a task, solver or scorer argument,
the sample's metadata or store, or a log).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

import httpx2
from inspect_ai.solver import TaskState
from kestrel_protocol.surface import TRIALS_PATH

__all__ = [
    "LOCAL_PARENT",
    "Trial",
    "TrialUnavailable",
    "mint_trial",
    "revoke_trial",
    "trial_name",
]

LOCAL_PARENT: Final = "local"
"""The principal of ``kestrel-mcp`` when none is named; a local trial is its child."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


class TrialUnavailable(Exception):
    """The door could not make (or end) a trial: an outage, not the agent's doing."""


@dataclass(frozen=True, slots=True)
class Trial:
    """One run of the agent: the principal it trades as and, through a door, the
    trial's token (its id, and the bearer kept out of every repr)."""

    name: str
    principal: str
    token_id: str | None = None
    bearer: str | None = field(default=None, repr=False)
    scenarios: tuple[str, ...] = ()
    """The only scenarios the trial sees and trades (its sample's); empty: the catalog."""


def trial_name(state: TaskState, attempt: int = 1) -> str:
    """``SAMPLE-eEPOCH-UUID`` (``-rN`` on the Nth attempt of a retried sample), UUID the
    sample's own (``TaskState.uuid``, new in every eval run): the same for the agent and
    the scorer of one attempt, another for every sample, epoch, attempt and run."""
    sample = _UNSAFE.sub("_", str(state.sample_id)).lstrip("._-")[:60] or "sample"
    name = f"{sample}-e{state.epoch}-{_UNSAFE.sub('_', state.uuid)}"
    return name + (f"-r{attempt}" if attempt > 1 else "")


_ISSUE: Final = (
    'kestrel-door token issue --principal NAME --scope "kestrel:read kestrel:trade '
    'kestrel:grade kestrel:trials"'
)


def _refused(response: httpx2.Response, what: str) -> Exception:
    """A door's refusal of ``what``: an outage (5xx, 429) is :class:`TrialUnavailable`;
    anything else is the evaluator's to fix: a token the door does not accept (401:
    unknown, revoked, or issued in another door's home), one without ``kestrel:trials``
    (403), or a request the door refuses as it stands (a scenario not in its catalog)."""
    try:
        refusal: Any = response.json().get("refusal", {})
    except ValueError:
        refusal = {}
    said = f"{refusal.get('code', response.status_code)}: {refusal.get('message', '')}".strip()
    if response.status_code >= 500 or response.status_code == 429:
        return TrialUnavailable(f"the door could not {what} (HTTP {response.status_code}) {said}")
    if response.status_code == 401:
        return ValueError(
            f"the door refused to {what}: {said} (the evaluator's token, from "
            f"$KESTREL_API_TOKEN or token_file; issue one on this door: {_ISSUE})"
        )
    if response.status_code == 403:
        return ValueError(
            f"the door refused to {what}: {said} (the evaluator's token needs the scope "
            "kestrel:trials besides kestrel:read kestrel:trade kestrel:grade)"
        )
    return ValueError(f"the door refused to {what}: {said}")


async def mint_trial(door: str, bearer: str, name: str, scenarios: tuple[str, ...] = ()) -> Trial:
    """Mint the trial ``name`` at ``door`` with the evaluator's ``bearer``, seeing and
    trading only ``scenarios`` when given (else the door's whole catalog)."""
    url = door.rstrip("/") + TRIALS_PATH
    body: dict[str, Any] = {"trial": name}
    if scenarios:
        body["scenarios"] = list(scenarios)
    try:
        async with httpx2.AsyncClient(timeout=30.0) as http:
            response = await http.post(
                url, json=body, headers={"Authorization": f"Bearer {bearer}"}
            )
    except httpx2.HTTPError as exc:
        raise TrialUnavailable(f"the door did not answer a trial: {type(exc).__name__}") from None
    if response.status_code != 201:
        raise _refused(response, f"mint the trial {name}")
    data = response.json()
    return Trial(name, str(data["principal"]), str(data["tokenId"]), str(data["token"]), scenarios)


async def revoke_trial(door: str, bearer: str, trial: Trial) -> None:
    """Revoke ``trial``'s token at ``door`` (the run is over: nobody trades as it again)."""
    url = f"{door.rstrip('/')}{TRIALS_PATH}/{trial.token_id}"
    try:
        async with httpx2.AsyncClient(timeout=30.0) as http:
            response = await http.delete(url, headers={"Authorization": f"Bearer {bearer}"})
    except httpx2.HTTPError as exc:
        raise TrialUnavailable(f"the door did not answer: {type(exc).__name__}") from None
    if response.status_code != 200:
        raise _refused(response, f"revoke the trial {trial.name}")
