"""Agent side of the tool bridge: a :class:`ToolGateway` that calls a trial's bridge over HTTP.

Used by agents served in their own process (``evaflow serve-agent``): the harness owns the
DB, the agent only sees responses. Synchronous on purpose - agent policies call tools from
worker threads, like the in-process gateway.
"""

from __future__ import annotations

from typing import Any

import httpx

from scenarios.models import Scenario
from tasks.simulate.tools.bridge import PARAM_SCENARIO_URL, PARAM_TOKEN, PARAM_TOOLS_URL

DEFAULT_TIMEOUT_S = 10.0


class BridgeParametersError(ValueError):
    """The ``start`` message did not say where the trial's tools are."""


class HttpToolGateway:
    """``call(name, params) -> response`` through a trial's HTTP bridge; never raises."""

    def __init__(self, tools_url: str, token: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.tools_url = tools_url.rstrip("/")
        self._client = httpx.Client(
            headers={"Authorization": f"Bearer {token}"}, timeout=timeout_s, trust_env=False
        )

    @classmethod
    def from_start_parameters(cls, params: dict[str, Any]) -> HttpToolGateway:
        missing = [k for k in (PARAM_TOOLS_URL, PARAM_TOKEN) if not params.get(k)]
        if missing:
            raise BridgeParametersError(
                f"start.customParameters lacks {missing}; got keys {sorted(params)}"
            )
        return cls(str(params[PARAM_TOOLS_URL]), str(params[PARAM_TOKEN]))

    def call(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            response = self._client.post(f"{self.tools_url}/{name}", json=params)
            body = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            return {"status": "error", "error_type": "bridge_unreachable", "message": str(exc)}
        if not isinstance(body, dict):
            return {"status": "error", "error_type": "bridge_error", "message": repr(body)[:200]}
        return body

    def schemas(self) -> list[dict[str, Any]]:
        response = self._client.get(self.tools_url)
        response.raise_for_status()
        return list(response.json())

    def close(self) -> None:
        self._client.close()


def fetch_scenario(params: dict[str, Any], timeout_s: float = DEFAULT_TIMEOUT_S) -> Scenario:
    """The scenario a harness shares with a trace-guided reference agent.

    Raises :class:`BridgeParametersError` when the harness did not share it.
    """
    url, token = params.get(PARAM_SCENARIO_URL), params.get(PARAM_TOKEN)
    if not url or not token:
        raise BridgeParametersError(
            "the harness did not share the scenario (start.customParameters has no "
            f"{PARAM_SCENARIO_URL!r}); run with agent param share_scenario: true"
        )
    with httpx.Client(trust_env=False, timeout=timeout_s) as client:
        response = client.get(str(url), headers={"Authorization": f"Bearer {token}"})
        response.raise_for_status()
        return Scenario.model_validate(response.json())
