"""The tool bridge: the one door every agent tool call goes through to the trial's DB.

``gateway`` (the harness-owned :class:`ToolGateway` in-process agents get), ``bridge`` (the
same tools over HTTP JSON for agents in another process), ``bridge_mcp`` (its MCP face),
``bridge_client`` (the agent side: a gateway that calls the bridge over HTTP).
"""
