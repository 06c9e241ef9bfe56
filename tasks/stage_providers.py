"""Which providers each stage of a trial calls: the names its Prefect tags and concurrency
limits carry (``provider:openai``, ``judge:openai``).

Pure code (no Prefect). The metered components of a system and of the caller come from
:mod:`tasks.costs.components` (the table costs are priced from), so a tag names the same
provider as the run's cost rows; offline components call nobody and name none.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from tasks.config import JudgeSpec
from tasks.trial_spec import TrialSpec

STAGE_TAG = "stage:{}"
PROVIDER_TAG = "provider:{}"
JUDGE_LIMIT = "judge:{}"
# The judge back-end that calls a provider; the offline judges (the default) call nobody,
# and a plug-in back-end names no endpoint we could read.
PROVIDER_JUDGE = "llm"


def simulation_providers(spec: TrialSpec) -> list[str]:
    """The providers one attempt's call reaches: the system's components, then the caller's
    (sorted, without repeats; empty for the in-process agents and the scripted caller)."""
    from tasks.costs.components import agent_components, caller_components

    system = spec.system.model_dump(mode="json")
    caller = spec.caller.model_dump(mode="json")
    found = [
        *(c.provider for c in agent_components(spec.run_id, system)),
        *(c.provider for c in caller_components(spec.run_id, caller)),
    ]
    return sorted(set(found))


def judge_provider(judge: JudgeSpec) -> str | None:
    """The provider the run's judge calls, or None (offline judges call nobody).

    With a model list: its deployments' LiteLLM providers (``bedrock+openai+vertex_ai``).
    Otherwise the llm judge names an endpoint, not a provider: a host the providers table knows for
    an LLM is that provider (``api.openai.com`` -> ``openai``), any other is its
    ``host:port`` (a local vLLM or Ollama server is a provider of its own).
    """
    if judge.name != PROVIDER_JUDGE:
        return None
    if judge.params.get("model_list") and not judge.uses_endpoint():
        # The judges' deployments may span providers: one limit over all of them.
        from tasks.model_list import deployments

        return "+".join(sorted({d.provider for d in deployments(judge.params["model_list"])}))
    from tasks.judges.llm import DEFAULT_BASE_URL
    from tasks.systems.providers import PROVIDERS

    url = str(judge.params.get("base_url") or DEFAULT_BASE_URL)
    where = urlsplit(url if "://" in url else f"https://{url}")
    llms = [p for p in PROVIDERS.values() if p.role == "llm"]
    known = {urlsplit(p.rest).hostname: p.provider for p in llms}
    return known.get(where.hostname) or where.netloc or url


def judge_limit_name(provider: str) -> str:
    """The Prefect global concurrency limit on the judge calls to one provider."""
    return JUDGE_LIMIT.format(provider)


def stage_tag(stage: str) -> str:
    return STAGE_TAG.format(stage)


def provider_tags(providers: list[str]) -> list[str]:
    """One ``provider:<name>`` tag per provider a stage calls."""
    return [PROVIDER_TAG.format(p) for p in providers]
