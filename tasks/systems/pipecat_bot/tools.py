"""The trial's tool bridge as the LLM's functions: every call runs in the harness's engine.

The bridge's URL and token arrive in the Twilio ``start`` message's ``customParameters``
(docs/agent-protocol.md section 8); its ``GET /tools`` gives the schemas (OpenAI
function-calling form), ``POST /tools/<name>`` executes one call. Tool errors are data:
whatever the bridge answers (or an unreachable bridge, as an error response) is the
function's result, so the model sees it exactly as an in-process agent would.
"""

from __future__ import annotations

from typing import Any

import httpx
from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.services.llm_service import FunctionCallParams

PARAM_TOOLS_URL = (
    "tools_url"  # one home: tasks.simulate.tools.bridge (imported names would pull in uvicorn)
)
PARAM_TOKEN = "tools_token"
TIMEOUT_S = 10.0


class BridgeError(RuntimeError):
    """The start message did not say where the tools are, or the bridge did not answer."""


class BridgeTools:
    """One call's tools: schemas for the LLM, and a handler that executes through the bridge."""

    def __init__(self, tools_url: str, token: str) -> None:
        self.tools_url = tools_url.rstrip("/")
        self.client = httpx.AsyncClient(
            headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT_S, trust_env=False
        )
        self.schemas: list[dict[str, Any]] = []
        self.toolset: ToolsSchema | None = None

    @classmethod
    def from_start(cls, params: dict[str, Any]) -> BridgeTools:
        missing = [k for k in (PARAM_TOOLS_URL, PARAM_TOKEN) if not params.get(k)]
        if missing:
            raise BridgeError(f"start.customParameters lacks {missing}; got {sorted(params)}")
        return cls(str(params[PARAM_TOOLS_URL]), str(params[PARAM_TOKEN]))

    async def load(self) -> ToolsSchema:
        """Fetch the trial's schemas; the Pipecat form of them."""
        try:
            response = await self.client.get(self.tools_url)
            response.raise_for_status()
            self.schemas = list(response.json())
        except (httpx.HTTPError, ValueError) as exc:
            raise BridgeError(f"tool bridge {self.tools_url} did not list tools: {exc}") from exc
        self.toolset = ToolsSchema(standard_tools=[function_schema(s) for s in self.schemas])
        return self.toolset

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            response = await self.client.post(f"{self.tools_url}/{name}", json=arguments)
            body = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            return {"status": "error", "error_type": "bridge_unreachable", "message": str(exc)}
        if not isinstance(body, dict):
            return {"status": "error", "error_type": "bridge_error", "message": repr(body)[:200]}
        return body

    async def handle(self, params: FunctionCallParams) -> None:
        """Pipecat's catch-all function handler: run the call, hand the result back."""
        result = await self.call(params.function_name, dict(params.arguments or {}))
        await params.result_callback(result)

    async def close(self) -> None:
        await self.client.aclose()


def function_schema(schema: dict[str, Any]) -> FunctionSchema:
    """An OpenAI function-calling schema as Pipecat's provider-neutral ``FunctionSchema``."""
    function = schema.get("function", schema)
    parameters = function.get("parameters") or {}
    return FunctionSchema(
        name=str(function["name"]),
        description=str(function.get("description") or ""),
        properties=dict(parameters.get("properties") or {}),
        required=list(parameters.get("required") or []),
    )
