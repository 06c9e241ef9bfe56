"""The chat model of an LLM component (the ``llm`` agent, the ``llm`` caller) as a LiteLLM
deployment, called through :mod:`tasks.llm_router`.

A component names its model one of two ways:

* one OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, a LiteLLM proxy): ``base_url``,
  ``model`` and ``api_key_env``, the name of the variable holding the key. It becomes the
  deployment ``openai/<model>`` at ``api_base = base_url`` with the key
  ``os.environ/<api_key_env>``;
* a LiteLLM model list (``model_list``, the reference's shape): ``model`` is one of its
  ``model_name``s, and the list's entry says provider, endpoint and key variable.

Either way the key is read from the environment by LiteLLM at call time and is never in
the parameters, so never stored. Building a :class:`ChatModel` warms LiteLLM
(:func:`tasks.llm_router.warm`): components build theirs before the conversation starts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tasks.llm_router import ChatCall, RouterPolicy, chat, warm
from tasks.model_list import ENV_REF, Deployment, first_deployment, model_names

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
# Sent as the key to an endpoint that needs none: OpenAI's client refuses to send no key.
NO_KEY = "no-key"


class ChatEndpoint(BaseModel):
    """Where and how an LLM component calls its model (never holds the key itself)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    base_url: str = Field(default=DEFAULT_BASE_URL, description="Endpoint incl. /v1")
    model: str = Field(
        default="gpt-4o-mini",
        description="The endpoint's model id, or with model_list one of its model_names",
    )
    api_key_env: str | None = Field(
        default=None, description="Name of the env var holding the endpoint's key (none: no key)"
    )
    model_list: list[Deployment] | None = Field(
        default=None, description="LiteLLM model list (keys as os.environ/NAME references)"
    )
    temperature: float | None = Field(
        default=0.0, ge=0.0, le=2.0, description="Sampling temperature (None: server default)"
    )
    max_tokens: int | None = Field(default=None, ge=1, description="Completion token cap")
    timeout_s: float = Field(default=60.0, gt=0, description="Per-request timeout (LiteLLM)")
    max_retries: int = Field(
        default=3, ge=0, le=20, description="LiteLLM's retries after the first try"
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="Merged into every request body (e.g. top_p)"
    )

    @model_validator(mode="after")
    def _endpoint_or_list(self) -> ChatEndpoint:
        if self.model_list is None:
            return self
        if both := sorted({"base_url", "api_key_env"} & self.model_fields_set):
            raise ValueError(
                f"{', '.join(both)}: with model_list the list's entry names endpoint and key"
            )
        if self.model not in model_names(self.model_list):
            names = ", ".join(model_names(self.model_list))
            raise ValueError(f"model {self.model!r} is not in the model list (names: {names})")
        return self

    def deployments(self) -> list[Deployment]:
        if self.model_list is not None:
            return list(self.model_list)
        return [endpoint_deployment(self.model, self.base_url, self.api_key_env)]

    def policy(self) -> RouterPolicy:
        return RouterPolicy(num_retries=self.max_retries, timeout_s=self.timeout_s)

    def request_params(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        if self.temperature is not None:
            found["temperature"] = self.temperature
        if self.max_tokens:
            found["max_tokens"] = self.max_tokens
        if self.extra_body:
            found["extra_body"] = dict(self.extra_body)
        return found


def endpoint_deployment(model: str, base_url: str, api_key_env: str | None) -> Deployment:
    """One OpenAI-compatible endpoint's model as a deployment named ``model``."""
    key = ENV_REF + api_key_env if api_key_env else NO_KEY
    # model_construct: NO_KEY is no secret, but a Deployment refuses any literal key.
    return Deployment.model_construct(
        model_name=model,
        litellm_params={"model": f"openai/{model}", "api_base": base_url, "api_key": key},
        model_info=None,
    )


def provider_model(deployment: Deployment) -> str:
    """The provider's model id (``openai/gpt-5.2`` -> ``gpt-5.2``): what prices key on."""
    model = str(deployment.litellm_params["model"])
    return model.split("/", 1)[1] if "/" in model else model


EndpointT = TypeVar("EndpointT", bound=BaseModel)


class EndpointParamsError(ValueError):
    """Bad parameters of an LLM component (names the fields, never echoes their values)."""


def parse_params(
    cls: type[EndpointT],
    raw: Any,
    owner: str,
    error: type[ValueError] = EndpointParamsError,
) -> EndpointT:
    """``cls(**raw)`` with an ``error`` that names the fields but leaves out the input values.

    pydantic quotes the offending value, and a user may have put a key where it must not
    be (``api_key: sk-...``); such an error text would be stored with the attempt.
    """
    try:
        return cls.model_validate(dict(raw or {}))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(params)'}: "
            f"{err['msg'].removeprefix('Value error, ')}"
            for err in exc.errors(include_input=False, include_url=False)
        )
        fields = ", ".join(sorted(cls.model_fields))
        raise error(f"{owner} params: {problems} (valid: {fields})") from None


class ChatModel:
    """An LLM component's model: built (and LiteLLM warmed) before the conversation, then
    one :meth:`complete` per model turn. ``extra`` request params ride on every call
    (the caller's ``seed``)."""

    def __init__(self, endpoint: ChatEndpoint, extra: Mapping[str, Any] | None = None) -> None:
        self.endpoint = endpoint
        self.deployments = endpoint.deployments()
        self.policy = endpoint.policy()
        self.params = {**endpoint.request_params(), **dict(extra or {})}
        deployment = first_deployment(self.deployments, endpoint.model)
        assert deployment is not None  # the endpoint's validator checked the name
        self.deployment = deployment
        warm(self.deployments, self.policy)

    @property
    def model(self) -> str:
        """The provider's model id (usage rows and prices key on it)."""
        return provider_model(self.deployment)

    @property
    def api_base(self) -> str | None:
        base = self.deployment.litellm_params.get("api_base")
        return str(base) if base else None

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: str | None = None,
    ) -> ChatCall:
        return chat(
            self.deployments,
            self.endpoint.model,
            messages,
            tools=tools,
            tool_choice=tool_choice,
            params=self.params,
            policy=self.policy,
        )
