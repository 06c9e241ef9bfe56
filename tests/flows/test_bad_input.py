"""Bad input to every ``evaflow`` command: one line naming the option, file, field or
value, exit 2, before anything starts (no Prefect, no flow, no store write), and every
stored file unchanged.

One row per value-taking option of every command (``evaflow --help`` and each command's
``--help``), plus damaged inputs (a truncated dataset, a record with a missing field, a
corrupt store file). Run in-process through ``flows.cli.main(argv)``; Prefect and every
store write are replaced by a tripwire, so a case that gets past the checks fails here
instead of starting a run.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from flows.cli import main
from tasks.config import BenchmarkConfig
from tasks.sources import BUILTIN_PACK
from tests.analysis.synthetic import CONDITIONS, RUN, TRIALS, build_store


class Case(NamedTuple):
    id: str
    argv: list[str]
    names: list[str]  # what the one line must name (option, file, field, value)


# Placeholders: {store} a store holding two runs, {missing} a path that does not exist,
# {file} a plain text file, {dir} an empty directory, {eva} a directory with data/,
# {corrupt} a store whose one file is not Parquet, {yaml:X} / {pack:X} the inputs below.
CASES = [
    # --- the command line itself
    Case("unknown-command", ["nosuch"], ["nosuch"]),
    Case("unknown-option", ["run", "--nosuch", "1"], ["--nosuch"]),
    Case("missing-value", ["query", "--format"], ["--format"]),
    # --- run
    Case("run-config-missing", ["run", "--config", "{missing}.yaml"], ["{missing}.yaml"]),
    Case("run-config-dir", ["run", "--config", "{dir}"], ["{dir}"]),
    Case(
        "run-config-unknown-key", ["run", "--config", "{yaml:unknown}"], ["unknown.yaml", "trialz"]
    ),
    Case(
        "run-config-wrong-type", ["run", "--config", "{yaml:type}"], ["type.yaml", "trials", "many"]
    ),
    Case("run-config-bad-yaml", ["run", "--config", "{yaml:broken}"], ["broken.yaml"]),
    Case(
        "run-config-judge-concurrency-zero",
        ["run", "--config", "{yaml:judgeconc0}"],
        ["judgeconc0.yaml", "judge_concurrency", "0"],
    ),
    Case(
        "run-config-judge-concurrency-type",
        ["run", "--config", "{yaml:judgeconcx}"],
        ["judgeconcx.yaml", "judge_concurrency", "many"],
    ),
    Case("run-config-not-mapping", ["run", "--config", "{yaml:list}"], ["list.yaml"]),
    Case(
        "run-config-bad-name",
        ["run", "--config", "{yaml:agent}"],
        ["agent.yaml", "systems[0].agent", "nobody"],
    ),
    Case(
        "run-config-bad-conditions-file",
        ["run", "--config", "{yaml:condfile}"],
        ["conditions_file", "{missing}"],
    ),
    Case("run-eva-root-missing", ["run", "--eva-root", "{missing}"], ["{missing}"]),
    Case("run-eva-root-empty", ["run", "--eva-root", "{dir}"], ["{dir}"]),
    Case("run-pack-missing", ["run", "--pack", "{missing}"], ["{missing}"]),
    Case("run-pack-truncated", ["run", "--pack", "{pack:truncated}"], ["airline_dataset.json"]),
    Case(
        "run-pack-missing-field",
        ["run", "--pack", "{pack:nofield}"],
        ["airline_dataset.json", "user_goal"],
    ),
    Case("run-domains", ["run", "--domains", "bogus"], ["domain", "bogus"]),
    Case("run-records", ["run", "--records", "no-such"], ["scenarios.records", "no-such"]),
    Case("run-limit-negative", ["run", "--limit", "-1"], ["limit", "-1"]),
    Case("run-limit-not-int", ["run", "--limit", "x"], ["--limit", "'x'"]),
    Case("run-agent", ["run", "--agent", "bogus"], ["agent", "bogus"]),
    Case("run-system", ["run", "--system", "no-such"], ["no-such"]),
    Case("run-caller", ["run", "--caller", "bogus"], ["caller.name", "bogus"]),
    Case("run-judge", ["run", "--judge", "bogus"], ["judge.name", "bogus"]),
    Case("run-model-list", ["run", "--model-list", "{missing}"], ["--model-list", "{missing}"]),
    Case("run-model-list-text", ["run", "--model-list", "{file}"], ["--model-list", "{file}"]),
    Case("run-judge-model", ["run", "--judge-model", "faithfulness"], ["--judge-model"]),
    Case("run-judge-model-metric", ["run", "--judge-model", "nope=m"], ["--judge-model", "nope"]),
    Case("run-conditions", ["run", "--conditions", "bogus"], ["conditions", "bogus"]),
    Case(
        "run-judge-concurrency-zero",
        ["run", "--judge-concurrency", "0"],
        ["--judge-concurrency", "0"],
    ),
    Case(
        "run-judge-concurrency-negative",
        ["run", "--judge-concurrency", "-2"],
        ["--judge-concurrency", "-2"],
    ),
    Case(
        "run-judge-concurrency-not-int",
        ["run", "--judge-concurrency", "x"],
        ["--judge-concurrency", "'x'"],
    ),
    Case("run-trials-zero", ["run", "--trials", "0"], ["trials", "0"]),
    Case("run-max-attempts-zero", ["run", "--max-attempts", "0"], ["max_attempts", "0"]),
    Case("run-mode", ["run", "--mode", "bogus"], ["mode", "bogus"]),
    Case("run-clock", ["run", "--clock", "bogus"], ["clock", "bogus"]),
    Case("run-seed-negative", ["run", "--seed", "-1"], ["seed", "-1"]),
    Case("run-store-is-file", ["run", "--store", "{file}"], ["{file}"]),
    Case("run-run-id", ["run", "--run-id", "a/b"], ["run_id", "a/b"]),
    Case("run-runner", ["run", "--runner", "bogus"], ["runner.kind", "bogus"]),
    Case("run-workers-negative", ["run", "--workers", "-1"], ["workers", "-1"]),
    Case("run-workers-zero", ["run", "--workers", "0"], ["workers", "0"]),
    Case("run-dask-address", ["run", "--dask-address", "nonsense"], ["dask_address", "nonsense"]),
    Case(
        "run-corrupt-store",
        ["run", "--store", "{corrupt}", "--run-id", "r1"],
        ["runs/r1/current.parquet"],
    ),
    # --- query
    Case("query-missing-store", ["query", "SELECT 1", "--store", "{missing}"], ["{missing}"]),
    Case("query-store-is-file", ["query", "SELECT 1", "--store", "{file}"], ["{file}"]),
    Case("query-bad-sql", ["query", "SELEKT 1", "--store", "{store}"], ["SELEKT"]),
    Case("query-unknown-table", ["query", "SELECT * FROM nope", "--store", "{store}"], ["nope"]),
    Case("query-run", ["query", "SELECT 1", "--store", "{store}", "--run", "no-such"], ["no-such"]),
    Case(
        "query-format",
        ["query", "SELECT 1", "--store", "{store}", "--format", "xml"],
        ["--format", "xml"],
    ),
    Case(
        "query-corrupt-store",
        ["query", "SELECT * FROM trials", "--store", "{corrupt}"],
        ["{corrupt}/", ".parquet"],
    ),
    # --- runs
    Case("runs-list-missing-store", ["runs", "list", "--store", "{missing}"], ["{missing}"]),
    Case(
        "runs-list-format",
        ["runs", "list", "--store", "{store}", "--format", "xml"],
        ["--format", "xml"],
    ),
    Case("runs-show-unknown", ["runs", "show", "no-such", "--store", "{store}"], ["no-such"]),
    Case("runs-show-missing-store", ["runs", "show", RUN, "--store", "{missing}"], ["{missing}"]),
    # --- report
    Case("report-unknown-run", ["report", "no-such", "--store", "{store}"], ["no-such"]),
    Case("report-missing-store", ["report", RUN, "--store", "{missing}"], ["{missing}"]),
    Case(
        "report-out-is-file",
        ["report", RUN, "--store", "{store}", "--out", "{file}"],
        ["--out", "{file}"],
    ),
    # --- compare
    Case("compare-unknown-run", ["compare", "no-such", "--store", "{store}"], ["no-such"]),
    Case("compare-missing-store", ["compare", RUN, "--store", "{missing}"], ["{missing}"]),
    Case(
        "compare-systems",
        ["compare", RUN, "--store", "{store}", "--systems", "steady,nope"],
        ["nope"],
    ),
    Case(
        "compare-condition",
        ["compare", RUN, "--store", "{store}", "--systems", "steady,mixed", "--condition", "bogus"],
        ["bogus"],
    ),
    Case("compare-seed", ["compare", RUN, "--store", "{store}", "--seed", "x"], ["--seed", "'x'"]),
    # --- score, aggregate
    Case("score-unknown-run", ["score", "no-such", "--store", "{store}"], ["no-such"]),
    Case("score-missing-store", ["score", RUN, "--store", "{missing}"], ["{missing}"]),
    Case("score-judge", ["score", RUN, "--store", "{store}", "--judge", "bogus"], ["bogus"]),
    Case("score-metrics", ["score", RUN, "--store", "{store}", "--metrics", "nope"], ["nope"]),
    Case("score-name", ["score", RUN, "--store", "{store}", "--name", "a/b"], ["a/b"]),
    Case(
        "score-model-list",
        ["score", RUN, "--store", "{store}", "--model-list", "{missing}"],
        ["--model-list", "{missing}"],
    ),
    Case(
        "score-judge-model",
        ["score", RUN, "--store", "{store}", "--judge-model", "nope=m"],
        ["--judge-model", "nope"],
    ),
    Case(
        "score-llm-no-list",
        ["score", RUN, "--store", "{store}", "--judge", "llm"],
        ["EVA_MODEL_LIST", "--model-list"],
    ),
    Case("aggregate-unknown-run", ["aggregate", "no-such", "--store", "{store}"], ["no-such"]),
    Case("aggregate-missing-store", ["aggregate", RUN, "--store", "{missing}"], ["{missing}"]),
    # --- analyze
    Case("analyze-which", ["analyze", "bogus", "--store", "{store}"], ["bogus"]),
    Case(
        "analyze-runs",
        ["analyze", "robustness", "--store", "{store}", "--runs", "no-such"],
        ["no-such"],
    ),
    Case("analyze-missing-store", ["analyze", "robustness", "--store", "{missing}"], ["{missing}"]),
    Case(
        "analyze-out-is-file",
        ["analyze", "robustness", "--store", "{store}", "--runs", RUN, "--out", "{file}"],
        ["--out", "{file}"],
    ),
    Case(
        "analyze-stats-missing",
        ["analyze", "published", "--stats", "{missing}.json"],
        ["--stats", "{missing}.json"],
    ),
    Case("analyze-stats-not-json", ["analyze", "published", "--stats", "{file}"], ["{file}"]),
    Case(
        "analyze-systems",
        ["analyze", "robustness", "--store", "{store}", "--runs", RUN, "--systems", "nope"],
        ["--systems", "nope"],
    ),
    # --- serve-agent
    Case("serve-agent-unknown", ["serve-agent", "bogus"], ["bogus"]),
    Case("serve-agent-port", ["serve-agent", "reference", "--port", "70000"], ["--port", "70000"]),
    Case(
        "serve-agent-port-negative", ["serve-agent", "reference", "--port", "-1"], ["--port", "-1"]
    ),
    Case(
        "serve-agent-host",
        ["serve-agent", "reference", "--host", "no such host"],
        ["--host", "no such host"],
    ),
    Case(
        "serve-agent-param",
        ["serve-agent", "reference", "--param", "novalue"],
        ["--param", "novalue"],
    ),
    Case(
        "serve-agent-llm-params",  # the llm agent's params are checked at start-up
        ["serve-agent", "llm", "--param", "modle=x"],
        ["llm", "modle"],
    ),
    # --- scenarios
    Case(
        "scenarios-list-eva-root", ["scenarios", "list", "--eva-root", "{missing}"], ["{missing}"]
    ),
    Case("scenarios-list-pack", ["scenarios", "list", "--pack", "{missing}"], ["{missing}"]),
    Case(
        "scenarios-list-pack-truncated",
        ["scenarios", "list", "--pack", "{pack:truncated}"],
        ["airline_dataset.json"],
    ),
    Case("scenarios-list-domains", ["scenarios", "list", "--domains", "bogus"], ["bogus"]),
    Case("scenarios-show-key", ["scenarios", "show", "airline/no-such"], ["airline/no-such"]),
    Case("scenarios-show-domain", ["scenarios", "show", "bogus/x"], ["bogus"]),
    Case(
        "scenarios-show-eva-root",
        ["scenarios", "show", "airline/1.1.2", "--eva-root", "{missing}"],
        ["{missing}"],
    ),
    Case(
        "scenarios-show-pack",
        ["scenarios", "show", "airline/air-001", "--pack", "{missing}"],
        ["{missing}"],
    ),
    Case(
        "scenarios-validate-eva-root",
        ["scenarios", "validate", "--eva-root", "{missing}"],
        ["{missing}"],
    ),
    Case(
        "scenarios-validate-pack",
        ["scenarios", "validate", "--pack", "{pack:nofield}"],
        ["user_goal"],
    ),
    Case(
        "scenarios-replay-eva-root",
        ["scenarios", "replay", "--eva-root", "{missing}", "--reference", "{dir}"],
        ["{missing}"],
    ),
    Case(
        "scenarios-replay-reference",
        ["scenarios", "replay", "--eva-root", "{eva}", "--reference", "{missing}"],
        ["--reference", "{missing}"],
    ),
    Case(
        "scenarios-replay-domains",
        [
            "scenarios",
            "replay",
            "--eva-root",
            "{eva}",
            "--reference",
            "{dir}",
            "--domains",
            "bogus",
        ],
        ["bogus"],
    ),
    Case(
        "scenarios-generate-out-is-file",
        ["scenarios", "generate", "--out", "{file}"],
        ["--out", "{file}"],
    ),
    Case(
        "scenarios-generate-domain",
        ["scenarios", "generate", "--out", "{dir}/p", "--domain", "bogus"],
        ["bogus"],
    ),
    Case(
        "scenarios-generate-n",
        ["scenarios", "generate", "--out", "{dir}/p", "--domain", "airline", "--n", "0"],
        ["--n", "0"],
    ),
    Case(
        "scenarios-generate-seed",
        ["scenarios", "generate", "--out", "{dir}/p", "--seed", "x"],
        ["--seed", "'x'"],
    ),
    # --- judges
    Case(
        "judges-set-missing", ["judges", "validate", "--set", "{missing}"], ["--set", "{missing}"]
    ),
    Case("judges-judge", ["judges", "validate", "--set", "{dir}", "--judge", "bogus"], ["bogus"]),
    Case("judges-metric", ["judges", "validate", "--set", "{dir}", "--metric", "bogus"], ["bogus"]),
    Case(
        "judges-model-list",
        ["judges", "validate", "--set", "{dir}", "--judge", "llm", "--model-list", "{file}"],
        ["--model-list", "{file}"],
    ),
    Case(
        "judges-judge-model",
        ["judges", "validate", "--set", "{dir}", "--judge", "llm", "--judge-model", "x"],
        ["--judge-model", "x"],
    ),
    Case(
        "judges-llm-no-list",
        ["judges", "validate", "--set", "{dir}", "--judge", "llm"],
        ["EVA_MODEL_LIST"],
    ),
    Case("judges-cv", ["judges", "validate", "--set", "{dir}", "--cv", "x"], ["--cv", "'x'"]),
    Case("judges-seed", ["judges", "validate", "--set", "{dir}", "--seed", "x"], ["--seed", "'x'"]),
    Case("noise-unknown-run", ["judges", "noise", "no-such", "--store", "{store}"], ["no-such"]),
    Case("noise-missing-store", ["judges", "noise", RUN, "--store", "{missing}"], ["{missing}"]),
    Case("noise-repeats", ["judges", "noise", RUN, "--store", "{store}", "--repeats", "1"], ["2"]),
    Case(
        "noise-repeats-type",
        ["judges", "noise", RUN, "--store", "{store}", "--repeats", "x"],
        ["--repeats", "'x'"],
    ),
    Case(
        "noise-judge", ["judges", "noise", RUN, "--store", "{store}", "--judge", "bogus"], ["bogus"]
    ),
    Case(
        "noise-metrics",
        ["judges", "noise", RUN, "--store", "{store}", "--metrics", "nope"],
        ["nope"],
    ),
    Case(
        "noise-prefix", ["judges", "noise", RUN, "--store", "{store}", "--prefix", "a/b"], ["a/b"]
    ),
    Case(
        "noise-model-list",
        ["judges", "noise", RUN, "--store", "{store}", "--model-list", "{missing}"],
        ["--model-list", "{missing}"],
    ),
    Case(
        "noise-judge-model",
        ["judges", "noise", RUN, "--store", "{store}", "--judge-model", "nope=m"],
        ["--judge-model", "nope"],
    ),
    Case(
        "noise-llm-no-list",
        ["judges", "noise", RUN, "--store", "{store}", "--judge", "llm"],
        ["EVA_MODEL_LIST", "--model-list"],
    ),
    # --- systems
    Case("systems-list-dir", ["systems", "list", "--systems-dir", "{missing}"], ["{missing}"]),
    Case("systems-show-unknown", ["systems", "show", "no-such"], ["no-such"]),
    Case(
        "systems-show-dir",
        ["systems", "show", "no-such", "--systems-dir", "{missing}"],
        ["{missing}"],
    ),
    Case("systems-check-unknown", ["systems", "check", "no-such"], ["no-such"]),
    Case(
        "systems-check-dir", ["systems", "check", "no-such", "--systems-dir", "{file}"], ["{file}"]
    ),
]


YAMLS = {
    "unknown": "trialz: 3\n",
    "type": "trials: many\n",
    "broken": "trials: [1,\n",
    "judgeconc0": "judge_concurrency: 0\n",
    "judgeconcx": "judge_concurrency: many\n",
    "list": "- trials\n",
    "agent": "systems: [{name: a, agent: nobody}]\n",
    "condfile": "conditions_file: {missing}\n",
}


def _store(root: Path) -> str:
    """The synthetic store; its audio run's stored configuration made a real one (the
    synthetic row carries a note field no run config has), as ``score`` reads it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    store = build_store(str(root))
    [part] = root.glob(f"runs/{RUN}/*.parquet")
    config = BenchmarkConfig(run_id=RUN, conditions=list(CONDITIONS), trials=TRIALS)
    table = pq.read_table(part)
    column = pa.array([config.model_dump_json()] * len(table))
    pq.write_table(
        table.set_column(table.schema.get_field_index("config_json"), "config_json", column), part
    )
    return store.root


def _damaged_packs(root: Path) -> dict[str, Path]:
    """The built-in pack's airline domain, damaged two ways."""
    packs = {}
    for name in ("truncated", "nofield"):
        pack = root / f"pack-{name}"
        pack.mkdir()
        for item in ("airline_dataset.json", "airline_scenarios", "agents"):
            src = BUILTIN_PACK / item
            copy = shutil.copytree if src.is_dir() else shutil.copy
            copy(src, pack / item)
        packs[name] = pack
    data = packs["truncated"] / "airline_dataset.json"
    data.write_text(data.read_text()[:500])
    data = packs["nofield"] / "airline_dataset.json"
    records = json.loads(data.read_text())
    del records[0]["user_goal"]
    data.write_text(json.dumps(records))
    return packs


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("bad-input")
    (root / "empty").mkdir()
    (root / "plain.txt").write_text("not a directory, not a store\n")
    subs = {
        "{store}": _store(root / "store"),
        "{missing}": str(root / "does-not-exist"),
        "{file}": str(root / "plain.txt"),
        "{dir}": str(root / "empty"),
        "{eva}": str(root / "eva"),  # passes the layout check: replay's other options
    }
    (root / "eva" / "data").mkdir(parents=True)
    for part in ("trials/r1/b1.parquet", "runs/r1/current.parquet"):
        corrupt = root / "corrupt" / part
        corrupt.parent.mkdir(parents=True)
        corrupt.write_bytes(b"PAR1 not really parquet")
    subs["{corrupt}"] = str(root / "corrupt")
    for name, text in YAMLS.items():
        path = root / f"{name}.yaml"
        path.write_text(text.replace("{missing}", subs["{missing}"]))
        subs[f"{{yaml:{name}}}"] = str(path)
    for name, pack in _damaged_packs(root).items():
        subs[f"{{pack:{name}}}"] = str(pack)
    return subs


def _fill(text: str, subs: dict[str, str]) -> str:
    for key, value in subs.items():
        text = text.replace(key, value)
    return text


def _hashes(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


class Started(AssertionError):
    """Something that must not happen on bad input happened."""


def _tripwire(what: str) -> Any:
    def trip(*_: Any, **__: Any) -> None:
        raise Started(f"bad input reached {what}")

    return trip


@pytest.fixture
def tripwires(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    import flows.cli
    import flows.env
    from tasks.store import Store

    monkeypatch.setattr(flows.cli, "execute", _tripwire("the flow (Prefect)"))
    monkeypatch.setattr(flows.env, "configure_prefect", _tripwire("Prefect"))
    monkeypatch.setattr(Store, "_write_atomic", _tripwire("a store write"))
    monkeypatch.setenv("EVAFLOW_SYSTEMS_PATH", "")
    monkeypatch.delenv("EVA_MODEL_LIST", raising=False)  # an llm judge then has no list
    monkeypatch.chdir(tmp_path)  # the default ./evaflow-data would land here
    return tmp_path


def _value_options() -> dict[str, set[str]]:
    """Every command (``runs list``) and the options of it that take a value."""
    import typer

    from flows.cli import app, load_commands

    load_commands()

    found: dict[str, set[str]] = {}

    def walk(command: Any, path: list[str]) -> None:
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, [*path, name])
        if not getattr(command, "commands", None):
            found[" ".join(path)] = {
                opt
                for p in command.params
                if p.param_type_name == "option" and not p.is_flag
                for opt in p.opts
                if opt.startswith("--")
            }

    walk(typer.main.get_command(app), [])
    return found


def _commands() -> set[str]:
    return {name.split()[0] for name in _value_options()}


# A row of a command this checkout does not have (yet) is left out; the coverage test
# below asks a row of every command it does have.
LIVE = [c for c in CASES if c.argv[0] in _commands() or c.id == "unknown-command"]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("case", LIVE, ids=[c.id for c in LIVE])
def test_bad_input_is_one_line_and_exit_2(
    case: Case, inputs: dict[str, str], tripwires: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    every_root = [Path(inputs[k]) for k in ("{store}", "{corrupt}", "{dir}")]
    before = [_hashes(r) for r in every_root]
    argv = case.argv
    if argv[0] == "run" and "--store" not in argv:  # bad input leaves a stored run alone
        argv = [*argv, "--store", "{store}"]
    code = main([_fill(a, inputs) for a in argv])
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, f"exit {code}; stderr: {captured.err[-2000:]}"
    assert len(lines) == 1, f"stderr is {len(lines)} lines: {captured.err[-2000:]}"
    assert lines[0].startswith("error: ")
    for name in case.names:
        assert _fill(name, inputs) in lines[0], f"{name!r} not named in: {lines[0]}"
    assert [_hashes(r) for r in every_root] == before, "a stored file changed"
    assert not (tripwires / "evaflow-data").exists()


def test_every_option_that_takes_a_value_has_a_bad_value_row() -> None:
    """A new option (or command) needs its row above."""
    covered: dict[str, set[str]] = {}
    for case in CASES:
        words = [a for a in case.argv if not a.startswith("--")]
        for n in (2, 1):
            if " ".join(words[:n]) in _value_options():
                covered.setdefault(" ".join(words[:n]), set()).update(case.argv)
                break
    missing = {
        cmd: sorted(opts - covered.get(cmd, set())) for cmd, opts in _value_options().items()
    }
    assert {cmd: opts for cmd, opts in missing.items() if opts} == {}
