"""Task runners for the benchmark flow: threads, or Dask with cheap per-trial submission.

One Prefect task per trial stays; what made each cost a few hundred milliseconds of the
flow's own process was how ``prefect_dask`` submits: for every task it serialises the
whole Prefect settings model (a recursive walk over ~250 settings, with secret handling),
and Dask tokenises the arguments (pickling the trial spec and scenario) to make a key. The
runner below serialises the flow's context once, at the first submission (nothing in it
changes while trials are submitted), gives every task a unique key (so nothing is
hashed), and sends the trial's arguments quoted (Prefect does not walk them looking for
futures: they hold none). What runs in the worker is Prefect's own ``run_task_sync``, as
with ``prefect_dask``: a task run with its states, reported to the flow's API. Local
workers fork from one process that imported all that code once (see
:func:`forked_local_workers`).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any, TypeVar
from uuid import uuid4

from prefect_dask import DaskTaskRunner
from prefect_dask.task_runners import PrefectDaskFuture

from tasks.config import BenchmarkConfig

# Dask's statistical profiler samples every worker thread 100 times a second; nothing here
# reads it, and on a small machine it takes CPU from the trials.
_WORKER_ENV = {"DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}


class _TaskCall:
    """One task run's arguments, opaque to Dask (which would rebuild containers it walks)."""

    __slots__ = ("context", "context_key", "parameters", "task", "task_run_id")

    def __init__(
        self,
        task: Any,
        task_run_id: Any,
        parameters: dict[str, Any],
        context: dict[str, Any],
        context_key: str,
    ) -> None:
        self.task = task
        self.task_run_id = task_run_id
        self.parameters = parameters
        self.context = context
        self.context_key = context_key

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.task, self.task_run_id, self.parameters, self.context, self.context_key)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.task, self.task_run_id, self.parameters, self.context, self.context_key = state


# Per worker process: the settings and API client of the run whose tasks it is running.
_worker_clients: dict[str, tuple[Any, Any]] = {}


def _settings_and_client(call: _TaskCall) -> tuple[Any, Any]:
    """Built once per run in each worker, not per task: Prefect rebuilds its settings model
    and opens a new API client (with a fresh TLS context) for every task it hydrates."""
    from prefect.context import SettingsContext, SyncClientContext

    if call.context_key not in _worker_clients:
        _worker_clients.clear()  # a worker serves one run at a time
        settings = SettingsContext(**call.context["settings_context"])
        with settings:
            client = SyncClientContext()
            client.__enter__()  # stays open for the worker's life, as Prefect's own would
        _worker_clients[call.context_key] = (settings, client)
    return _worker_clients[call.context_key]


def _run_in_worker(call: _TaskCall) -> Any:
    """Worker side: one Prefect task run (as ``prefect_dask``'s wrapper, sync tasks only).
    Arguments are quoted again here: Dask's task spec turns a quote (a namedtuple) into a
    plain tuple on the way, so the call carries them bare (see :func:`trial_parameters`)."""
    from prefect.context import SettingsContext, SyncClientContext
    from prefect.task_engine import run_task_sync
    from prefect.utilities.annotations import quote

    settings, client = _settings_and_client(call)
    context = {k: v for k, v in call.context.items() if k != "settings_context"}
    settings_token = SettingsContext.__var__.set(settings)
    client_token = SyncClientContext.__var__.set(client)
    try:
        return run_task_sync(
            task=call.task,
            task_run_id=call.task_run_id,
            parameters={name: quote(value) for name, value in call.parameters.items()},
            return_type="state",
            dependencies={name: set() for name in call.parameters},
            context=context,
        )
    finally:
        SyncClientContext.__var__.reset(client_token)
        SettingsContext.__var__.reset(settings_token)


def _unquoted(value: Any) -> Any:
    from prefect.utilities.annotations import quote

    return value.unquote() if isinstance(value, quote) else value


def trial_parameters(spec: Any, scenario: Any) -> dict[str, Any]:
    """A trial task's arguments, quoted for every runner. Unquoted, Prefect walks each
    argument looking for futures, on submission and again in the task engine: about 35 ms
    per trial over a whole scenario, held under the GIL of the flow's process (threads)."""
    from prefect.utilities.annotations import quote

    return {"spec": quote(spec), "scenario": quote(scenario)}


class TrialDaskTaskRunner(DaskTaskRunner):
    """A ``DaskTaskRunner`` for many independent tasks whose arguments hold no futures."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._context: dict[str, Any] | None = None
        self._context_key = uuid4().hex

    def submit(  # type: ignore[override]
        self,
        task: Any,
        parameters: dict[str, Any],
        wait_for: Any = None,
        dependencies: Any = None,
    ) -> PrefectDaskFuture[Any]:
        if wait_for or dependencies:
            raise ValueError("TrialDaskTaskRunner runs independent tasks (no wait_for)")
        if task.isasync:
            raise ValueError(f"TrialDaskTaskRunner runs sync tasks; {task.name} is async")
        if not self._started:
            raise RuntimeError("The task runner must be started before submitting work.")
        from prefect.context import AssetContext, serialize_context

        task_run_id = uuid4()
        parameters = {name: _unquoted(value) for name, value in parameters.items()}
        if self._context is None:
            self._context = serialize_context()
        inputs: dict[str, set[Any]] = {name: set() for name in parameters}
        context = {
            **self._context,
            "asset_context": AssetContext.from_task_and_inputs(
                task=task, task_run_id=task_run_id, task_inputs=inputs, copy_to_child_ctx=True
            ).serialize(),
        }
        future = self.client.submit(
            _run_in_worker,
            _TaskCall(task, task_run_id, parameters, context, self._context_key),
            key=f"{task.name}-{task_run_id.hex}",
            pure=False,
        )
        return PrefectDaskFuture(wrapped_future=future, task_run_id=task_run_id)


Item = TypeVar("Item")


def submission_window(workers: int) -> int:
    """Trials in flight at once: enough that no worker waits while the flow stores a batch
    (a commit takes a few text-mode trials' time), few enough that submitting is spread
    over the run instead of keeping the workers idle before the first trial."""
    return max(16, 4 * workers)


def completed_in_window(
    submit: Callable[[Item], Any], items: Iterable[Item], window: int
) -> Iterator[Any]:
    """Futures of ``submit(item)`` for every item, each yielded once it is done, with at most
    ``window`` submitted and not yet yielded. Items are submitted in order; the next one is
    submitted before a finished one is handed over, so workers are fed while it is stored.
    Submitting all at once cost the Dask runner ~2 s of idle workers per 1,000 trials."""
    finished: queue.SimpleQueue[Any] = queue.SimpleQueue()
    remaining = iter(items)
    in_flight = 0

    def submit_next() -> bool:
        for item in remaining:
            submit(item).add_done_callback(finished.put)
            return True
        return False

    while in_flight < window and submit_next():
        in_flight += 1
    while in_flight:
        done = finished.get()
        in_flight -= 1
        if submit_next():
            in_flight += 1
        yield done


def release_result(future: Any) -> None:
    """Drop a collected trial's result from its future (and, for Dask, from its worker).

    The flow holds every future until its trials are all collected (``as_completed`` keeps
    the list it was given), and each one caches its final state, whose data is the whole
    ``TrialResult``; a Dask worker also keeps every result a client future still points
    to. Without this a text run of 1,098 attempts held all its records twice over (run
    process and workers) until the end. The writer has its rows by the time this runs.
    """
    future._final_state = None  # Prefect's cache of the task's final state
    wrapped = getattr(future, "wrapped_future", None)
    if isinstance(wrapped, Future):
        wrapped._result = None  # done: nothing reads it again
    elif wrapped is not None and hasattr(wrapped, "release"):
        wrapped.release()  # distributed.Future: the worker frees the result


def task_runner_for(config: BenchmarkConfig, api_url: str | None = None) -> Any:
    """The configured runner; a local Dask cluster's workers get ``api_url`` in their
    environment (also what anything they start before their first task reads)."""
    from prefect.task_runners import ThreadPoolTaskRunner

    if config.runner.kind == "threads":
        return ThreadPoolTaskRunner(max_workers=config.runner.workers)
    if config.runner.dask_address:
        return TrialDaskTaskRunner(address=config.runner.dask_address)
    env = {**_WORKER_ENV, **({"PREFECT_API_URL": api_url} if api_url else {})}
    return TrialDaskTaskRunner(
        cluster_kwargs={
            "n_workers": config.runner.workers,
            "threads_per_worker": 1,
            "processes": True,
            "dashboard_address": None,
            "env": env,
        }
    )


def worker_modules(audio: bool) -> list[str]:
    """What a worker imports before its first trial: Dask, Prefect's task engine, the trial
    code and, for audio runs, the DSP its resampling uses."""
    from tasks.trial import AUDIO_TRIAL_MODULES, TRIAL_MODULES

    return [
        "distributed",
        "prefect.task_engine",
        "tasks.steps",
        *TRIAL_MODULES,
        *(AUDIO_TRIAL_MODULES if audio else ()),
    ]


def warm_worker(audio: bool = True) -> None:
    """Run on every Dask worker once it is up, while the flow still checks its configuration:
    the first task a worker ran used to spend about a second importing Prefect's task engine
    and the trial code, the other worker waiting on nothing. A worker forked from the run's
    forkserver (:func:`forked_local_workers`) has them already. Import errors surface in
    the trials that need the module, as rows.

    The ~200,000 objects of those modules live as long as the worker, so they are moved
    out of the cyclic garbage collector's reach (``gc.freeze``): a worker's exit used to
    spend 1-1.5 s of CPU collecting them again, on the cores the run's report was using.
    """
    import contextlib
    import gc
    import importlib

    for name in worker_modules(audio):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    gc.freeze()


@contextmanager
def forked_local_workers(runner: Any, audio: bool) -> Iterator[bool]:
    """Local Dask workers started in this block fork from one process that imported the
    trial code once (multiprocessing's ``forkserver``), instead of each importing it
    again in a new interpreter (Dask's default ``spawn``): 1.7 s of CPU per worker, on
    the cores the flow checks its configuration on. A fork shares those pages, and the
    server itself is a fresh process, so no thread of this one is forked. Yields whether
    workers fork: where the platform has no forkserver, or the cluster is remote, nothing
    changes. Call :func:`release_forkserver` once the cluster is closed."""
    import multiprocessing

    if (
        not isinstance(runner, DaskTaskRunner)
        or runner.address
        or "forkserver" not in multiprocessing.get_all_start_methods()
    ):
        yield False
        return
    import dask
    import distributed.utils

    # Dask sets its own preload list (distributed and its dependencies) the first time it
    # starts a forkserver worker, unless told it already has; ours includes distributed.
    multiprocessing.get_context("forkserver").set_forkserver_preload(worker_modules(audio))
    distributed.utils._forkserver_preload_set = True
    global _forked_clusters
    with _forked_lock:
        _forked_clusters += 1
    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
        yield True


# Local clusters of this process whose workers forked from its forkserver and still run.
_forked_clusters = 0
_forked_lock = threading.Lock()


def release_forkserver() -> None:
    """A cluster of :func:`forked_local_workers` is closed; the last one to close stops the
    forkserver (never before: it reports its children's exit codes). Its children inherit
    its environment and its imports, so a later run in the same process (a sweep, a
    notebook, tests) starts a new one and sees the environment of its time, as spawned
    workers would."""
    from multiprocessing import forkserver

    global _forked_clusters
    with _forked_lock:
        _forked_clusters = max(0, _forked_clusters - 1)
        if _forked_clusters:
            return  # another run's workers still fork from (and report through) it
        # ``_stop`` is how CPython's own tests stop it; there is no public way.
        stop = getattr(forkserver._forkserver, "_stop", None)
        if stop is not None:
            stop()


class RunnerLifetime:
    """The flow's task runner, started and closed off the flow's critical path.

    A local Dask cluster (worker processes that import the trial code) takes seconds to
    start and to close. It starts in a background thread on entry, while the flow checks
    its configuration and loads records; ``ready`` waits for it. ``close_in_background``
    closes it while the run is summarised and reported; leaving the block waits for that
    (or closes it now, if the flow failed first). Threads cost nothing to start: same path.
    """

    def __init__(self, config: BenchmarkConfig, api_url: str | None = None) -> None:
        self.runner = task_runner_for(config, api_url)
        self._audio = config.mode == "audio"
        self._starting: threading.Thread | None = None
        self._closing: threading.Thread | None = None
        self._error: BaseException | None = None
        self._forked = False

    def __enter__(self) -> RunnerLifetime:
        self.runner.__enter__()
        if isinstance(self.runner, DaskTaskRunner):
            self._starting = threading.Thread(target=self._connect, name="dask-start")
            self._starting.start()
        return self

    def _connect(self) -> None:
        try:
            # The client property creates the cluster and its client.
            with forked_local_workers(self.runner, self._audio) as self._forked:
                client = self.runner.client
            client.run(warm_worker, self._audio)
        except BaseException as exc:  # noqa: BLE001 - re-raised by ready() on the flow's thread
            self._error = exc

    def ready(self) -> Any:
        """The started runner (re-raises what starting it raised)."""
        if self._starting is not None:
            self._starting.join()
        if self._error is not None:
            raise self._error
        return self.runner

    def close_in_background(self) -> None:
        if self._closing is None:
            self._closing = threading.Thread(target=self._close, name="runner-close")
            self._closing.start()

    def _close(self) -> None:
        if self._starting is not None:
            self._starting.join()  # a cluster still starting is closed once it has started
        self.runner.__exit__(None, None, None)
        if self._forked:
            release_forkserver()

    def __exit__(self, *exc_info: Any) -> None:
        if self._closing is None:
            self._close()  # the flow failed before its trials were collected
        else:
            self._closing.join()
