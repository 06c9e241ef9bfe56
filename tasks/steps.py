"""Thin Prefect task wrappers around the pure pipeline functions.

One ``run-trial`` task per trial runs the attempt loop of :func:`tasks.trial.run_trial`;
inside it each stage is a nested task run of its own, so the flow run's page shows them:
``simulate-attempt`` (every attempt, regenerated ones included), ``validate-attempt``
(validation metrics and verdict) and ``judge-kept`` (the full metric set, on the kept
attempt only, when the run scores). Each is tagged ``stage:<name>`` and ``provider:<name>``
per provider it calls (:mod:`tasks.stage_providers`). After the trials, ``aggregate-run``
recomputes the run's aggregates (and the flow's ``write-report`` writes its report).

Retries are for infrastructure only. The stage functions never raise: a crashed call, a
provider outage or a harness fault becomes an infra_error row that the attempt loop
regenerates, and an agent's failure is a row that is scored, so neither is ever retried
here (a retried simulation would also bill its providers twice). What can still raise is
Prefect's own machinery around a stage, the judge limit's slot (its server unreachable,
a lease lost): the two judging stages retry that, and are safe to run again because
judging returns a new result and leaves its input as it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from prefect import tags, task
from prefect.cache_policies import NO_CACHE
from prefect.utilities.annotations import quote

from scenarios.models import Scenario
from tasks.records import AttemptRecord
from tasks.stage_providers import (
    judge_limit_name,
    judge_provider,
    provider_tags,
    simulation_providers,
    stage_tag,
)
from tasks.trial import (
    AttemptResult,
    TrialResult,
    TrialSpec,
    TrialStages,
    judge_kept,
    run_trial,
    simulate_attempt_step,
    validate_attempt_step,
)

if TYPE_CHECKING:
    from tasks.store import Store  # the flow's process only: workers never load pandas

# Before each tagged task run Prefect asks its server whether the tags carry concurrency
# limits, and remembers a "none" for 5 s only. On the run's temporary SQLite server that
# request often fails at once ("database is locked": its transaction reads, then writes
# while another write is open) and the client retries only after 2 s: in a paired run of
# 17 stage-heavy tests the stage tags cost 40 s (161 s without them, 201 s with). Our tags
# name stages and providers; the judge limit is a named global limit, not a tag limit. So
# a "none" is remembered for the process's life. A tag limit that exists when a tag set is
# first seen still applies (a "some" is never remembered); one created mid-run is not seen.
NO_TAG_LIMIT_MEMORY_S = 24 * 3600.0


def remember_tags_without_limits(seconds: float = NO_TAG_LIMIT_MEMORY_S) -> bool:
    """Make Prefect's "these tags have no limit" memory last ``seconds``; False if this
    Prefect version has no such memory (nothing changed)."""
    from prefect.concurrency import services

    cache = getattr(services, "_no_limits_cache", None)
    if cache is None or not hasattr(cache, "ttl") or not hasattr(cache, "maxsize"):
        return False
    if cache.ttl < seconds:
        services._no_limits_cache = type(cache)(maxsize=cache.maxsize, ttl=seconds)
    return True


remember_tags_without_limits()  # on import: the flow's process and every worker's

SIMULATE, VALIDATE, JUDGE = "simulate-attempt", "validate-attempt", "judge-kept"
AGGREGATE = "aggregate-run"
# Every task keeps its result in memory (the flow stores the trial's rows) and caches
# nothing (every call is new). A judge slot's API call failing is transient (a restarting
# server, a lost lease): the judging stages retry it, after these delays.
SLOT_RETRY_DELAYS_S = [1.0, 10.0]


def stage_task(name: str, **options: Any) -> Any:
    """Prefect's ``@task`` for a stage: named and tagged ``stage:<name>``, its result kept in
    memory and never cached (see above), plus ``options`` (retries)."""
    return task(
        name=name,
        tags=[stage_tag(name)],
        cache_policy=NO_CACHE,
        persist_result=False,
        log_prints=False,
        **options,
    )


@contextmanager
def judge_slot(spec: TrialSpec) -> Iterator[None]:
    """Hold one slot of the run's judge provider limit (``judge:<provider>``, created at
    flow start) while judging; offline judges call nobody and take none."""
    provider = judge_provider(spec.judge)
    if provider is None:
        yield
        return
    from prefect.concurrency.sync import concurrency

    with concurrency(judge_limit_name(provider), occupy=1):
        yield


def _judge_tags(spec: TrialSpec) -> list[str]:
    provider = judge_provider(spec.judge)
    return provider_tags([provider] if provider else [])


@stage_task(SIMULATE)
def simulate_attempt_task(spec: TrialSpec, scenario: Scenario, attempt: int) -> AttemptRecord:
    """One call; never retried (see the module's docstring)."""
    return simulate_attempt_step(spec, scenario, attempt)


@stage_task(VALIDATE, retries=len(SLOT_RETRY_DELAYS_S), retry_delay_seconds=SLOT_RETRY_DELAYS_S)
def validate_attempt_task(
    spec: TrialSpec, scenario: Scenario, record: AttemptRecord
) -> AttemptResult:
    """The validation metrics (some are judged: they take a judge slot too)."""
    with judge_slot(spec):
        return validate_attempt_step(spec, scenario, record)


@stage_task(JUDGE, retries=len(SLOT_RETRY_DELAYS_S), retry_delay_seconds=SLOT_RETRY_DELAYS_S)
def judge_kept_task(spec: TrialSpec, scenario: Scenario, kept: AttemptResult) -> AttemptResult:
    """The full metric set on the kept attempt, within the judge provider's limit."""
    with judge_slot(spec):
        return judge_kept(spec, scenario, kept)


# The stages as the trial loop calls them, tagged with the providers they call (the stage
# tag is the task's own). Arguments are quoted: unquoted, Prefect walks each one (a
# scenario, an attempt's record) looking for futures, twice per task run.
def _simulate(spec: TrialSpec, scenario: Scenario, attempt: int) -> AttemptRecord:
    with tags(*provider_tags(simulation_providers(spec))):
        return simulate_attempt_task(quote(spec), quote(scenario), attempt, return_state=False)


def _validate(spec: TrialSpec, scenario: Scenario, record: AttemptRecord) -> AttemptResult:
    with tags(*_judge_tags(spec)):
        return validate_attempt_task(
            quote(spec), quote(scenario), quote(record), return_state=False
        )


def _judge(spec: TrialSpec, scenario: Scenario, kept: AttemptResult) -> AttemptResult:
    with tags(*_judge_tags(spec)):
        return judge_kept_task(quote(spec), quote(scenario), quote(kept), return_state=False)


PREFECT_STAGES = TrialStages(simulate=_simulate, validate=_validate, judge=_judge)


@task(name="run-trial", cache_policy=NO_CACHE, persist_result=False, log_prints=False)
def run_trial_step(spec: TrialSpec, scenario: Scenario) -> TrialResult:
    """One trial: its attempts and their judging as nested stage tasks."""
    return run_trial(spec, scenario, PREFECT_STAGES)


@stage_task(AGGREGATE)
def aggregate_run_task(store: Store, run_id: str) -> list[dict[str, Any]]:
    """The run's aggregates over its committed trials (each metric's latest scoring)."""
    from tasks.summary import summarize_run

    return summarize_run(store, run_id)


def aggregate_run(store: Store, run_id: str) -> list[dict[str, Any]]:
    """The aggregate stage as the flow calls it (the store quoted: Prefect would walk it)."""
    return aggregate_run_task(quote(store), run_id, return_state=False)
