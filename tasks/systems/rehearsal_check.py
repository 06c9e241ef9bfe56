"""``evaflow systems check NAME --rehearse``: one short call per system against the
stand-ins, and what each component did (no Prefect, nothing stored).

Each system runs one attempt of one record (clean, real-time clock) inside a
:func:`tasks.systems.rehearsal.rehearsal`; the systems run one after another so that the
stand-ins' traffic (requests and streaming sessions, :func:`traffic`) during a call is that
system's own. A component "worked" when its stand-in saw traffic from it; the call's
outcome says whether the pieces fitted (status, tool calls, the record completed or not).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from scenarios.models import Scenario
from tasks.config import BenchmarkConfig, SystemSpec
from tasks.systems.rehearsal import ROUTES, provider_components, rehearsal

Key = tuple[str, str]  # (role, provider)


def traffic(servers: Mapping[str, Any]) -> Counter[Key]:
    """Requests or sessions each (role, provider) has sent the running stand-ins so far."""
    seen: Counter[Key] = Counter()

    def add(kind: str, role: str, count: int) -> None:
        for key, (standin, _) in ROUTES.items():
            if standin == kind and key[0] == role:
                seen[key] += count

    for kind, server in servers.items():
        if kind == "openai_http":
            paths = [path for path, _ in server.requests]
            add(kind, "stt", sum(p.endswith("/audio/transcriptions") for p in paths))
            add(kind, "llm", sum(p.endswith("/chat/completions") for p in paths))
            add(kind, "tts", sum(p.endswith("/audio/speech") for p in paths))
        elif kind == "anthropic":
            add(kind, "llm", len(server.requests))
        elif kind == "gemini":
            add(kind, "llm", sum("messages" in r for r in server.log))
            add(kind, "tts", sum("text" in r for r in server.log))
        elif kind == "deepgram":
            add(kind, "stt", len(server.listens))
            add(kind, "tts", len(server.speaks))
        elif kind in ("cartesia", "elevenlabs"):
            add(kind, "stt", len(server.stt_sessions))
            add(kind, "tts", len(server.tts_sessions))
        elif kind == "ultravox":
            add(kind, "realtime", len(server.calls))
        else:  # openai_realtime, gemini_live
            add(kind, "realtime", len(server.sessions))
    return seen


class ComponentResult(BaseModel):
    system: str
    component: str  # "stt deepgram (nova-3)"
    standin: str
    traffic: int  # requests or streaming sessions the stand-in got from it


class CallResult(BaseModel):
    system: str
    status: str
    end_reason: str | None
    error: str | None
    tool_calls: int
    completed: bool  # final DB hash == expected
    components: list[ComponentResult]


def _label(spec: SystemSpec, role: str) -> str:
    comp = (spec.params.get("components") or {}).get(role) or {}
    model = comp.get("model")
    return f"{role} {comp.get('provider')}" + (f" ({model})" if model else "")


def short_calls(
    systems: Sequence[SystemSpec], scenario: Scenario, max_duration_s: float = 120.0
) -> list[CallResult]:
    """One rehearsed attempt of ``scenario`` per system, in turn."""
    from tasks.systems.rehearsal import rehearsal_preflight
    from tasks.trial import expand_trials, run_trial

    config = BenchmarkConfig(
        run_id="rehearsal-check",
        rehearse=True,
        systems=list(systems),
        conditions=["clean"],
        trials=1,
        max_attempts=1,
        clock="realtime",
        max_duration_s=max_duration_s,
        metrics=["task_completion"],
    )
    results: list[CallResult] = []
    with rehearsal(config.systems, [scenario]) as running:
        rehearsal_preflight(running.systems)
        for spec in expand_trials(config, [scenario], None):
            before = traffic(running.servers)
            record = run_trial(spec, scenario).attempts[-1].record
            used = traffic(running.servers) - before
            components = [
                ComponentResult(
                    system=spec.system.name,
                    component=_label(spec.system, role),
                    standin=ROUTES[(role, name)][0],
                    traffic=used[(role, name)],
                )
                for role, name in provider_components(spec.system)
            ]
            results.append(
                CallResult(
                    system=spec.system.name,
                    status=record.status,
                    end_reason=record.end_reason,
                    error=record.error,
                    tool_calls=len(record.tool_calls),
                    completed=record.final_db_hash == record.expected_db_hash,
                    components=components,
                )
            )
    return results
