"""The ``evaflow`` command line. ``evaflow run`` with no arguments runs the embedded default."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from flows.app import (  # noqa: F401 - re-exported: ``from flows.cli import app`` still works
    DEFAULT_STORE,
    StoreOpt,
    app,
    console,
    emit_json,
    fail,
    out,
)
from flows.app import split_values as _split
from flows.judge_options import JudgeModelOpt, ModelListOpt, judge_options
from tasks.config import (
    DEFAULT_JUDGE_CONCURRENCY,
    BenchmarkConfig,
    ConfigError,
    load_config,
    parse_config,
)


def _systems(agents: list[str] | None) -> list[dict[str, Any]] | None:
    """``--agent reference`` / ``--agent name=ws://host:port`` -> system specs."""
    systems = []
    for item in _split(agents) or []:
        label, sep, target = item.partition("=")
        if not sep or "://" in label:
            label, target = ("external" if "://" in item else item), item
        systems.append({"name": label, "agent": target})
    return systems or None


@app.command()
def run(
    config_file: Annotated[Path | None, typer.Option("--config", help="YAML run config")] = None,
    quick: Annotated[bool, typer.Option(help="A small smoke run (under 2 minutes)")] = False,
    eva_root: Annotated[
        Path | None, typer.Option(help="Use the scenarios of an EVA checkout")
    ] = None,
    pack: Annotated[Path | None, typer.Option(help="Use a scenario pack directory")] = None,
    domains: Annotated[list[str] | None, typer.Option(help="Domains (comma separated)")] = None,
    records: Annotated[list[str] | None, typer.Option(help="Record ids (comma separated)")] = None,
    limit: Annotated[
        int | None,
        typer.Option(help="At most N records per domain; 0 = all (built-in pack default: 2)"),
    ] = None,
    agent: Annotated[
        list[str] | None,
        typer.Option(help="reference | text | llm | ws://URL; NAME=TARGET to label; repeatable"),
    ] = None,
    system: Annotated[
        list[str] | None,
        typer.Option(
            help="A system of the catalogue (`evaflow systems list`), e.g. gpt-realtime-1.5; "
            "repeatable, combines with --agent"
        ),
    ] = None,
    caller: Annotated[str | None, typer.Option(help="Caller: scripted | llm")] = None,
    judge: Annotated[str | None, typer.Option(help="Judges: offline | llm")] = None,
    judge_concurrency: Annotated[
        int | None,
        typer.Option(
            "--judge-concurrency",
            min=1,
            help="At most N judging stages calling the judge's provider at once (the Prefect "
            "global concurrency limit judge:<provider>, set to N); default: the Prefect "
            f"server's limit, else {DEFAULT_JUDGE_CONCURRENCY}. Offline judges call no "
            "provider and are not limited. Changing it does not change the run: a run "
            "resumes with another N",
        ),
    ] = None,
    model_list: ModelListOpt = None,
    judge_model: JudgeModelOpt = None,
    conditions: Annotated[
        list[str] | None, typer.Option(help="Conditions, e.g. clean,noise,accent")
    ] = None,
    trials: Annotated[int | None, typer.Option(help="Trials per scenario and condition")] = None,
    max_attempts: Annotated[int | None, typer.Option(help="Total attempts per trial")] = None,
    mode: Annotated[str | None, typer.Option(help="audio | text")] = None,
    clock: Annotated[str | None, typer.Option(help="virtual | realtime")] = None,
    seed: Annotated[int | None, typer.Option(help="Base seed")] = None,
    store: Annotated[str | None, typer.Option(help="Store root (default ./evaflow-data)")] = None,
    run_id: Annotated[str | None, typer.Option(help="Run id; reuse it to resume")] = None,
    runner: Annotated[str | None, typer.Option(help="threads | dask")] = None,
    workers: Annotated[int | None, typer.Option(help="Threads or local Dask workers")] = None,
    dask_address: Annotated[
        str | None, typer.Option(help="tcp://HOST:PORT of a Dask scheduler")
    ] = None,
    no_report: Annotated[bool, typer.Option("--no-report", help="Skip the HTML report")] = False,
    no_score: Annotated[
        bool,
        typer.Option("--no-score", help="Simulate and validate only; judge later: evaflow score"),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON")] = False,
    verbose: Annotated[bool, typer.Option(help="Show Prefect logs")] = False,
    no_preflight: Annotated[
        bool,
        typer.Option(
            "--no-preflight",
            help="Skip preflight's network part (hosts reachable, keys and models accepted); "
            "variables and each Pipecat pipeline's build are still checked",
        ),
    ] = False,
    check_only: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Only run preflight (variables, hosts, keys, each Pipecat pipeline built "
            "without a call), print what passed, and exit (2 if anything failed)",
        ),
    ] = False,
    rehearse: Annotated[
        bool,
        typer.Option(
            "--rehearse",
            help="Run the systems exactly as shipped against local stand-ins of their "
            "providers, with placeholder keys: nothing reaches a real provider or spends "
            "money (stored and reported as a REHEARSAL; local runners only)",
        ),
    ] = False,
    new_run_if_changed: Annotated[
        bool,
        typer.Option(
            "--new-run-if-changed",
            help="When --run-id names a stored run whose configuration differs, start a new "
            "run id (RUN_ID-<fingerprint>) instead of failing; resuming never mixes two "
            "configurations under one id",
        ),
    ] = False,
) -> None:
    """Run (or resume) a benchmark. With no options: the embedded offline default."""
    overrides: dict[str, Any] = {}
    if quick:
        overrides.update(QUICK_DEFAULTS)
    source: dict[str, Any] = {}
    for key, value in (("eva_root", eva_root), ("pack", pack), ("limit", limit)):
        if value is not None:
            source[key] = str(value) if isinstance(value, Path) else value
    if _split(domains):
        source["domains"] = _split(domains)
    if _split(records):
        source["records"] = _split(records)
    if source:
        overrides["scenarios"] = {**overrides.get("scenarios", {}), **source}
    simple = {
        "trials": trials,
        "max_attempts": max_attempts,
        "mode": mode,
        "clock": clock,
        "seed": seed,
        "store": store,
        "run_id": run_id,
    }
    overrides.update({k: v for k, v in simple.items() if v is not None})
    if _systems(agent) or _split(system):
        # Catalogue names stay names here: the config expands them (with its systems_dirs).
        overrides["systems"] = (_systems(agent) or []) + (_split(system) or [])
    if caller:
        overrides["caller"] = {"name": caller}
    overrides.update(_judge_overrides(judge, model_list, judge_model))
    if judge_concurrency is not None:
        overrides["judge_concurrency"] = judge_concurrency
    if _split(conditions):
        overrides["conditions"] = _split(conditions)
    run_cfg: dict[str, Any] = {}
    if runner:
        run_cfg["kind"] = runner
    if workers is not None:  # 0 is a value to refuse, not an unset option
        run_cfg["workers"] = workers
    if dask_address:
        run_cfg.update(kind="dask", dask_address=dask_address)
    if run_cfg:
        overrides["runner"] = run_cfg
    if no_report:
        overrides["report"] = False
    if no_score:
        overrides["score"] = False
    if rehearse:
        if dask_address:
            fail("--rehearse runs on local runners only (its stand-ins listen on loopback)")
        overrides["rehearse"] = True
    try:
        config = (
            load_config(config_file, overrides, os.environ)
            if config_file
            else parse_config(overrides, "command line", os.environ)
        )
    except ConfigError as exc:
        fail(str(exc))
    if judge_model and config.judge.name != "llm":
        fail(f"--judge-model assigns LLM judges; the run's judge is {config.judge.name!r}")
    _check_names(config, str(config_file or "command line"))
    from flows.systems_cli import check_rehearsal, check_systems

    if config.rehearse and config.runner.dask_address:
        fail("a rehearsal runs on local runners only (its stand-ins listen on loopback)")
    # Before Prefect starts: a missing key fails in a second, a rejected one in a few. A
    # rehearsal checks against its stand-ins (started here for --check, else by the flow).
    if config.rehearse:
        if check_only:
            check_rehearsal(config, network=not no_preflight)
    else:
        check_systems(config, network=not no_preflight)
    if no_preflight:
        # The flow checks again before anything is stored; it skips the same part.
        from tasks.systems.preflight import NETWORK_ENV

        os.environ[NETWORK_ENV] = "0"
    if check_only:
        out.print(f"preflight passed for {', '.join(s.name for s in config.systems)}")
        return
    config = _resumable(config, new_run_if_changed)
    summary = execute(
        config, verbose=verbose, show_progress=not as_json, new_run_if_changed=new_run_if_changed
    )
    if as_json:
        emit_json({**summary_json(summary), "rehearsal": config.rehearse})
    else:
        print_summary(summary, rehearsal=config.rehearse)


def _judge_overrides(
    judge: str | None, model_list: Path | None, assignments: list[str] | None
) -> dict[str, Any]:
    """``--judge``, ``--model-list`` and ``--judge-model`` as configuration overrides."""
    entries, models = judge_options(model_list, assignments)
    found: dict[str, Any] = {} if entries is None else {"model_list": entries}
    spec: dict[str, Any] = {"name": judge} if judge else {}
    if models:  # assigning judge models asks for the llm judge
        spec = {"name": judge or "llm", "params": {"models": models}}
    if spec:
        found["judge"] = spec
    return found


QUICK_DEFAULTS: dict[str, Any] = {
    "scenarios": {"limit": 1},
    "trials": 1,
    "conditions": ["clean", "noise"],
    "max_attempts": 2,
}


def _check_names(config: BenchmarkConfig, source: str) -> None:
    """Every name of the configuration exists (before Prefect starts; the flow checks again)."""
    from tasks.config_checks import check_names, load_checked

    try:
        check_names(config, source)
        # Loading is cheap (0.6 s for the whole EVA set); a missing or damaged file is found
        # here, named with its field, not in a traceback after Prefect has started.
        load_checked(config.scenarios)
    except (ConfigError, ValueError) as exc:  # ScenarioError is a ValueError
        fail(str(exc))


def _resumable(config: BenchmarkConfig, new_run_if_changed: bool) -> BenchmarkConfig:
    """The run id to use, checked against the store before Prefect starts (the flow checks
    again): a stored run resumes only with the configuration it was stored with."""
    from tasks.config_checks import resume_config
    from tasks.store import Store, StoreError

    try:
        return resume_config(Store(config.store), config.with_run_id(), new_run_if_changed)
    except (ConfigError, StoreError) as exc:
        fail(str(exc))
    return config


def execute(
    config: BenchmarkConfig,
    verbose: bool = False,
    show_progress: bool = True,
    new_run_if_changed: bool = False,
) -> Any:
    from flows.env import configure_prefect

    configure_prefect(config.store, verbose)
    from flows.benchmark import add_progress_hook, clear_progress_hooks, run_benchmark
    from flows.progress import TrialProgress, log_stream

    clear_progress_hooks()
    progress = TrialProgress(console, enabled=show_progress, lines=log_stream())
    add_progress_hook(progress.update)
    try:
        with progress:
            return run_benchmark(config, new_run_if_changed=new_run_if_changed)
    except ConfigError as exc:
        fail(str(exc))
    finally:
        clear_progress_hooks()


def summary_json(summary: Any) -> dict[str, Any]:
    return {
        "run_id": summary.run_id,
        "store": summary.store,
        "attempts": summary.attempts,
        "valid": summary.valid,
        "aggregates": summary.aggregates,
        "costs": summary_costs(summary),
    }


def summary_costs(summary: Any) -> list[dict[str, Any]]:
    """Per-system costs for the JSON summary (empty when they cannot be computed)."""
    from tasks.costs.summary import system_costs
    from tasks.store import Store

    try:
        return [c.model_dump() for c in system_costs(Store(summary.store), summary.run_id)]
    except Exception:  # noqa: BLE001 - the JSON summary is printed either way
        return []


REHEARSAL_BANNER = (
    "REHEARSAL: every provider was a local stand-in with placeholder keys; these results "
    "validate the configuration, they do not measure the providers"
)


def print_summary(summary: Any, rehearsal: bool = False) -> None:
    from flows.progress import print_whole, summary_table

    if rehearsal:
        out.print(f"[bold yellow]{REHEARSAL_BANNER}[/]", highlight=False)
    print_whole(out, summary_table(summary))
    out.print(
        f"run [bold]{summary.run_id}[/]: {summary.trials} trials "
        f"({summary.simulated_trials} simulated, {summary.skipped_trials} resumed), "
        f"{summary.attempts} attempts, {summary.valid} valid, {summary.wall_s:.0f} s"
    )
    from tasks.costs.summary import cost_lines
    from tasks.store import Store

    for line in cost_lines(Store(summary.store), summary.run_id):
        out.print(line, highlight=False, soft_wrap=True)
    out.print(f'tables: {summary.store} (query with: evaflow query "SELECT ...")')
    if summary.report:
        out.print(f"report: {summary.report}")
    if rehearsal:
        out.print(f"[bold yellow]{REHEARSAL_BANNER}[/]", highlight=False)


def load_commands() -> None:
    """Import every command module: importing one registers its subcommands on ``app``."""
    from flows import (  # noqa: F401
        analysis_cli,
        commands,
        compare_cli,
        judge_noise_cli,
        judges_cli,
        score_cli,
        serve_cli,
        systems_cli,
    )


def _usage_message(exc: typer.TyperException) -> str:
    """Typer's message, with the value it refused when it names none ("Invalid value for
    '--limit': Input should be a valid integer" leaves out what was typed)."""
    from pydantic import ValidationError

    message = exc.format_message()
    cause = exc.__cause__
    if isinstance(cause, ValidationError) and cause.errors():
        message += f" (got {cause.errors()[0].get('input')!r})"
    return " ".join(message.split())


def main(argv: list[str] | None = None) -> int:
    """The ``evaflow`` command; returns its exit code (``argv`` None: ``sys.argv[1:]``)."""
    load_commands()
    try:
        code = app(args=argv, prog_name="evaflow", standalone_mode=False)
    except typer.TyperException as exc:
        # A bad option value, a missing argument, an unknown command: one line, as every
        # other refusal, not Typer's boxed panel under the usage text. (With no arguments
        # at all Typer has printed the help already.)
        if type(exc).__name__ != "NoArgsIsHelpError":
            console.print(
                f"[bold red]error:[/] {escape(_usage_message(exc))}",
                highlight=False,
                soft_wrap=True,
            )
        return exc.exit_code
    except (KeyboardInterrupt, typer.Abort):
        console.print("interrupted; re-run with the same --run-id to resume")
        return 130
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    # Run through the imported module so subcommands register on the same ``app``.
    from flows.cli import main as _main

    sys.exit(_main())
