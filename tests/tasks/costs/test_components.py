"""Which model the ``llm`` agent's and caller's usage is expected under (costs view)."""

from __future__ import annotations

from tasks.costs.components import agent_components, caller_components

LIST = [
    {"model_name": "house", "litellm_params": {"model": "anthropic/claude-haiku-4-5"}},
    {"model_name": "plain", "litellm_params": {"model": "gpt-5.4"}},
]


def test_an_endpoint_model_is_its_own_name() -> None:
    (agent,) = agent_components("r", {"name": "s", "agent": "llm", "params": {"model": "m"}})
    assert (agent.component, agent.model) == ("llm", "m")


def test_a_model_list_name_is_its_providers_model() -> None:
    """The ``llm_call`` events carry the provider's model (what the price table keys on)."""
    params = {"model": "house", "model_list": LIST}
    (agent,) = agent_components("r", {"name": "s", "agent": "llm", "params": params})
    (caller,) = caller_components("r", {"name": "llm", "params": {**params, "model": "plain"}})
    assert (agent.model, caller.model) == ("claude-haiku-4-5", "gpt-5.4")
