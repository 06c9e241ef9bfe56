"""A provider's failure goes to the harness as ``provider_error``, never as silence (issue 29).

Without this, a provider that rejects the key, cannot be reached, rate-limits past the
client's retries, sends a malformed payload or drops its socket leaves the bot silent, and
the harness stores the attempt as the agent's failure (``agent_timeout``). The published
channel is the ``provider_error`` event of docs/agent-protocol.md (section 9): the harness
ends the call at once as ``provider_error``, status ``infra_error``, and regenerates it.

How Pipecat 1.14 surfaces a failure (``pipecat/processors/frame_processor.py``
``push_error`` / ``push_error_frame``, ``pipecat/pipeline/worker.py``): the failing
service pushes an :class:`ErrorFrame` upstream, with itself as ``processor`` and an
:class:`ErrorCategory` (HTTP status, connectivity, ...); at the pipeline's head the
worker calls its ``on_pipeline_error`` handlers with the frame. Websocket services
(``pipecat/services/websocket_service.py``) report each failed reconnection the same way,
HTTP services (OpenAI, Anthropic, Google) report a completion that failed after the SDK's
own retries. The failing service's base class (:class:`STTService`, :class:`LLMService`,
:class:`TTSService`) names its role, and the system has one component per role, so the
component (provider, model) follows. One failure escapes that path: a service task that
dies of an exception Pipecat only logs (Gemini Live's connection task, when its host
cannot be reached); the task manager's log line names the processor, so a log sink
reports it the same way (:func:`on_task_log`).

Every error of a provider component is fatal to the call: it lost the caller's words, the
agent's answer or its voice, and a conversation that goes on measures the outage, not the
agent. Only ``ErrorCategory.APPLICATION`` (the application's own code failed, e.g. a tool
handler, the provider being healthy) and errors of processors that are no component
(transport, aggregators) are reported as not fatal: kept on the harness's timeline, and
the harness blames the provider for a silence that follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any

from loguru import logger
from pipecat.frames.frames import ErrorFrame
from pipecat.services.llm_service import LLMService
from pipecat.services.stt_service import STTService
from pipecat.services.tts_service import TTSService
from pipecat.utils.errors import ErrorCategory

from tasks.systems.pipecat_bot.components import SystemParams

EVENT = "provider_error"
# Not a provider: the bot itself could not set the call up (see :func:`report_setup_failure`).
BOT = "evaflow-pipecat-bot"
# Pipecat's service base classes and the role each serves (realtime services are LLMs).
ROLE_BASES: tuple[tuple[type[Any], str], ...] = (
    (STTService, "stt"),
    (TTSService, "tts"),
    (LLMService, "llm"),
)
MESSAGE_CHARS = 600
TASK_MANAGER = "pipecat.utils.asyncio.task_manager"

Send = Callable[[str], Awaitable[None]]


def role_of(processor: Any, system: SystemParams) -> str | None:
    """The system role ``processor`` serves (``stt``/``llm``/``tts``/``realtime``), if any."""
    for base, role in ROLE_BASES:
        if isinstance(processor, base):
            if role == "llm" and "llm" not in system.components:
                role = "realtime"  # speech-to-speech: the realtime service is Pipecat's LLM
            return role if role in system.components else None
    return None


def fault_event(frame: ErrorFrame, system: SystemParams, stream_sid: str) -> dict[str, Any]:
    """The ``provider_error`` message for one Pipecat error frame."""
    category = frame.category or ErrorCategory.UNKNOWN
    message = str(frame.error)
    if frame.exception is not None:  # "Error during completion: 0" says little on its own
        message += f" ({type(frame.exception).__name__})"
    fatal = bool(frame.fatal) or category is not ErrorCategory.APPLICATION
    return _event(frame.processor, system, stream_sid, message, category, fatal)


def _event(
    processor: Any,
    system: SystemParams,
    stream_sid: str,
    message: str,
    category: ErrorCategory,
    fatal: bool,
) -> dict[str, Any]:
    role = role_of(processor, system)
    event: dict[str, Any] = {
        "event": EVENT,
        "streamSid": stream_sid,
        "message": message[:MESSAGE_CHARS],
        "category": category.value,
        "service": type(processor).__name__ if processor is not None else None,
    }
    if role is None:  # not a provider: Pipecat's own machinery in the bot
        return event | {"provider": "pipecat", "role": "pipeline", "fatal": False}
    component = system.components[role]
    return event | {
        "provider": component.provider,
        "role": role,
        "model": component.model,
        "fatal": fatal,
    }


class FaultReporter:
    """Sends each provider failure of one call to the harness, until one is fatal."""

    def __init__(self, system: SystemParams, stream_sid: str, send: Send) -> None:
        self.system = system
        self.stream_sid = stream_sid
        self.send = send
        self.sent: list[dict[str, Any]] = []

    @property
    def done(self) -> bool:
        """A fatal failure was reported: the harness is ending the call."""
        return any(event["fatal"] for event in self.sent)

    async def on_pipeline_error(self, worker: Any, frame: ErrorFrame) -> None:
        await self.report(fault_event(frame, self.system, self.stream_sid))

    async def on_task_died(self, processor: Any, detail: str) -> None:
        """A service's own task died of an exception no error frame reported."""
        if role_of(processor, self.system) is None:
            return  # the transport's tasks end with the call: not a provider's failure
        message = f"{processor} stopped working: {detail}"
        await self.report(
            _event(processor, self.system, self.stream_sid, message, ErrorCategory.UNKNOWN, True)
        )

    async def report(self, event: dict[str, Any]) -> None:
        if self.done:
            return
        self.sent.append(event)
        logger.warning(f"reporting {EVENT} to the harness: {event}")
        # Straight to the socket, not through a pipeline that may be what is failing.
        with contextlib.suppress(Exception):  # the harness may have hung up already
            await self.send(json.dumps(event))


# Services' own tasks whose exception Pipecat only logs: processor name -> (it, its call).
_WATCHED: dict[str, tuple[Any, FaultReporter]] = {}


def processors_of(processor: Any) -> list[Any]:
    """``processor`` and every processor inside it (pipelines nest)."""
    return [processor, *(p for inner in processor.processors for p in processors_of(inner))]


def on_task_log(message: Any) -> None:
    """Loguru sink for Pipecat's task manager (``pipecat/utils/asyncio/task_manager.py``):
    a task that dies of an exception is only logged, ``"{processor}::{coroutine}
    unexpected exception (file:line): {error}"``; Gemini Live's connection task fails
    so when its host cannot be reached, and no error frame follows."""
    text = str(message.record["message"])
    name, _, rest = text.partition("::")
    _, marker, detail = rest.partition(" unexpected exception ")
    watched = _WATCHED.get(name)
    if not marker or watched is None:
        return
    with contextlib.suppress(RuntimeError):  # no running loop: nothing to report to
        loop = asyncio.get_running_loop()
        loop.create_task(watched[1].on_task_died(watched[0], detail.partition("): ")[2]))


@functools.cache
def watch_task_logs() -> None:
    logger.add(on_task_log, level="ERROR", filter=TASK_MANAGER, format="{message}")


def report_faults(worker: Any, system: SystemParams, stream_sid: str, send: Send) -> FaultReporter:
    """Hook a call's :class:`PipelineWorker`: its errors go to the harness over ``send``."""
    reporter = FaultReporter(system, stream_sid, send)
    worker.add_event_handler("on_pipeline_error", reporter.on_pipeline_error)
    watch_task_logs()
    processors = processors_of(worker.pipeline)
    _WATCHED.update({p.name: (p, reporter) for p in processors})

    async def forget(worker: Any, frame: Any) -> None:
        for processor in processors:
            _WATCHED.pop(processor.name, None)

    worker.add_event_handler("on_pipeline_finished", forget)
    return reporter


async def report_setup_failure(stream_sid: str, exc: BaseException, send: Send) -> None:
    """The bot could not build or run the call (a missing key, a service that would not
    construct, the tool bridge unreachable): the bot's failure, not the agent's."""
    event = {
        "event": EVENT,
        "streamSid": stream_sid,
        "provider": BOT,
        "role": "bot",
        "message": f"{type(exc).__name__}: {exc}"[:MESSAGE_CHARS],
        "fatal": True,
    }
    with contextlib.suppress(Exception):
        await send(json.dumps(event))
