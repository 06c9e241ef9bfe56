"""``evaflow judges noise`` on a real stored text-mode run: the offline judges measure zero
spread between repeats (stored, queried with DuckDB), a seeded noisy llm judge (a local
chat-completions stand-in through LiteLLM) a non-zero judge share and flip rate, and
misuse is one line and exit 2."""

from __future__ import annotations

import hashlib
import json
import random
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from flows.app import out
from flows.cli import main
from tasks.store import Store
from tests.fake_llm import FakeChatServer, fake_llm_fixture, text_reply  # noqa: F401
from tests.tasks.judges.test_llm import KEY_VAR, answer, reference_list
from tests.tasks.test_rescore import _text_run

RUN = "noisy"
SEED = 31


@pytest.fixture(scope="module")
def text_run(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """One scenario per domain, two trials each, scored by the offline judges."""
    return _text_run(tmp_path_factory.mktemp("judge-noise"), RUN, score=True)


def kept_attempts(store: Store) -> int:
    trials = store.read("trials", RUN)
    return int((trials["final"] & trials["valid"]).sum())


def test_offline_judges_have_no_spread_between_repeats(
    text_run: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["judges", "noise", RUN, "--repeats", "3", "--store", text_run.root, "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["judged"] == ["noise-1", "noise-2", "noise-3"] and report["resumed"] == []
    con = text_run.connect([RUN])
    rows = con.execute(
        "SELECT * FROM judge_noise WHERE prefix = 'noise' AND n_values > 0 ORDER BY metric"
    ).df()
    judged = set(rows.loc[rows["judge"] == "offline", "metric"])
    assert {"faithfulness", "conversation_progression", "conciseness"} <= judged
    assert (rows["n_attempts"] == kept_attempts(text_run)).all() and (rows["repeats"] == 3).all()
    assert (rows["judge_var"] == 0).all() and (rows["judge_sd_max"] == 0).all(), rows
    assert (rows["flip_rate"].fillna(0) == 0).all()
    assert (rows["judge_share"].fillna(0) == 0).all()
    # Never over earlier scorings: the run's own rows and all three repeats are stored.
    scorings = con.execute("SELECT DISTINCT coalesce(scoring, 'run') FROM metrics_all").df()
    assert set(scorings.iloc[:, 0]) == {"run", "noise-1", "noise-2", "noise-3"}
    # A second call resumes all three: none is judged again.
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["judged"] == [] and again["resumed"] == report["judged"]


def noisy_judge() -> Any:
    """Answers computed from what is sent: each prompt has a base rating (its hash), and
    the n-th time a prompt is seen, a seeded draw replaces it half of the time."""
    seen: Counter[str] = Counter()
    lock = threading.Lock()

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        sent = hashlib.sha256(json.dumps(body["messages"], sort_keys=True).encode()).hexdigest()
        with lock:
            seen[sent] += 1
            n = seen[sent]
        draw = random.Random(f"{SEED}:{sent}:{n}")
        rating = int(sent[:8], 16) % 3 + 1
        if draw.random() < 0.5:
            rating = draw.randint(1, 3)
        return text_reply(answer(rating))

    return reply


@pytest.mark.timeout(300)
def test_a_noisy_llm_judge_shows_a_judge_share_and_flips(
    text_run: Store,
    fake_llm: FakeChatServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(KEY_VAR, "sk-noise")
    monkeypatch.setattr(out, "width", 160)
    fake_llm.fallback = noisy_judge()
    models = tmp_path / "models.json"
    models.write_text(json.dumps(reference_list(fake_llm.base_url)))
    argv = ["judges", "noise", RUN, "--repeats", "4", "--prefix", "llm", "--judge", "llm"]
    argv += ["--metrics", "faithfulness", "--model-list", str(models), "--store", text_run.root]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "judge noise of noisy (llm-*)" in printed and "faithfulness" in printed
    rows = text_run.query("SELECT * FROM judge_noise WHERE prefix = 'llm'", [RUN])
    faith = rows.set_index("metric").loc["faithfulness"]
    assert faith["judge"] == "llm" and faith["judge_model"] == "us.anthropic.claude-opus-4-6-v1"
    assert faith["n_errors"] == 0 and faith["repeats"] == 4
    assert len(fake_llm.requests) == 4 * kept_attempts(text_run)  # kept attempts only
    assert faith["judge_sd"] > 0 and faith["flip_rate"] > 0 and faith["n_flipped"] >= 1
    assert 0 < faith["judge_share"] <= 1 and 0 < faith["judge_share_adjusted"] <= 1


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["nope"], "no run 'nope'"),
        ([RUN, "--repeats", "1"], "--repeats must be at least 2"),
        ([RUN, "--prefix", "a/b"], "--prefix"),
        ([RUN, "--judge", "oracle"], "oracle"),
        ([RUN, "--metrics", "nonsense"], "nonsense"),
    ],
)
def test_misuse_is_one_line_and_exit_2(
    text_run: Store, args: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    parts = len(text_run.parts("metrics", RUN))
    assert main(["judges", "noise", *args, "--store", text_run.root]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and says in err, err
    assert len(text_run.parts("metrics", RUN)) == parts
