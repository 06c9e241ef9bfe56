"""Media uploads through LiteLLM's files API: the Gemini Files API an audio judge falls back
to when its inline audio is too large, refused, or not heard (spec 4.7).

LiteLLM speaks Google's resumable upload protocol (``create_file`` with
``custom_llm_provider="gemini"``), reads a file's state (``file_retrieve``: ``processed``
once Google reports it ``ACTIVE``) and deletes it (``file_delete``). The file is then
sent as a ``{"type": "file", "file": {"file_id": <uri>, "format": <mime>}}`` content
part, which LiteLLM turns into Gemini's ``fileData``. Nothing here raises: a failure is
an ``error`` string, with the deployment's keys scrubbed (:func:`tasks.llm_router.error_text`).

Only ``gemini/`` deployments have this API (Vertex AI takes Cloud Storage URIs instead).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from tasks.llm_router import error_text, import_litellm, secrets
from tasks.model_list import Deployment, resolve_params

FILES_PROVIDER = "gemini"
ACTIVE = "processed"  # LiteLLM's status of a Gemini file in state ACTIVE
FAILED = "error"
# The chat endpoints sit under the API version (``.../v1beta/models/...``); the files
# endpoints add their own (``/upload/v1beta/files``, ``/v1beta/files/...``).
_VERSION_SUFFIXES = ("/v1beta", "/v1alpha", "/v1")


class UploadPolicy(BaseModel):
    """How long an upload may take to become usable (the reference: 15 polls, 2 s apart)."""

    model_config = {"frozen": True}
    wait_s: float = Field(default=30.0, gt=0, description="Most time to wait for ACTIVE")
    poll_s: float = Field(default=2.0, gt=0, description="Wait between two state reads")
    timeout_s: float = Field(default=120.0, gt=0, description="Per-request timeout")


class UploadedFile(BaseModel):
    """An uploaded file (``file_id`` is its URI) or why there is none."""

    file_id: str | None = None
    error: str | None = None
    polls: int = Field(default=0, description="State reads until it was ACTIVE")
    seconds: float = 0.0


def supports_files(deployment: Deployment) -> bool:
    return deployment.provider == FILES_PROVIDER


def files_params(deployment: Deployment, environ: Any = None) -> dict[str, Any]:
    """The deployment's key and address as the files calls take them (api_base without the
    API version; none: Google's)."""
    resolved = resolve_params(deployment, os.environ if environ is None else environ)
    params: dict[str, Any] = {"custom_llm_provider": FILES_PROVIDER}
    if isinstance(resolved.get("api_key"), str):
        params["api_key"] = resolved["api_key"]
    base = resolved.get("api_base")
    if isinstance(base, str) and base:
        base = base.rstrip("/")
        for suffix in _VERSION_SUFFIXES:
            base = base.removesuffix(suffix)
        params["api_base"] = base
    return params


def _keys(deployment: Deployment) -> list[str]:
    return secrets([deployment], deployment.model_name)


def upload_file(
    deployment: Deployment,
    data: bytes,
    mime: str,
    filename: str,
    policy: UploadPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> UploadedFile:
    """Upload ``data`` and wait until it is ACTIVE (never raises)."""
    policy = policy or UploadPolicy()
    started = time.perf_counter()
    out = UploadedFile()
    params = files_params(deployment)
    try:
        litellm = import_litellm()
        created = litellm.create_file(
            file=(filename, data, mime),
            purpose="user_data",
            timeout=policy.timeout_s,
            **params,
        )
        file_id = str(created.id)
        status = str(getattr(created, "status", ""))
        while status != ACTIVE:
            if status == FAILED:
                raise RuntimeError(f"file {file_id} failed processing")
            if out.polls * policy.poll_s >= policy.wait_s:
                raise TimeoutError(f"file {file_id} not ACTIVE after {policy.wait_s:g} s")
            if out.polls:
                sleep(policy.poll_s)
            out.polls += 1
            got = litellm.file_retrieve(file_id=file_id, timeout=policy.timeout_s, **params)
            status = str(getattr(got, "status", ""))
        out.file_id = file_id
    except Exception as exc:  # noqa: BLE001 - an upload that fails is data (the reason)
        out.error = f"file upload: {error_text(exc, _keys(deployment))}"
    out.seconds = time.perf_counter() - started
    return out


def delete_file(deployment: Deployment, file_id: str, timeout_s: float = 60.0) -> str | None:
    """Delete an uploaded file; the reason when that failed (the API expires it in 48 h)."""
    try:
        import_litellm().file_delete(file_id=file_id, timeout=timeout_s, **files_params(deployment))
    except Exception as exc:  # noqa: BLE001 - best effort, reported
        return f"file delete: {error_text(exc, _keys(deployment))}"
    return None


def file_part(file_id: str, mime: str) -> dict[str, Any]:
    """The content part that sends an uploaded file (LiteLLM: Gemini ``fileData``)."""
    return {"type": "file", "file": {"file_id": file_id, "format": mime}}
