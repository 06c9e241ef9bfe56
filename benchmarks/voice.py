"""Voice stack benchmark: ``python -m benchmarks.voice [--quick]``.

Measures TTS and STT real-time factors, and word error rate plus exact key-entity accuracy
(codes, employee IDs, amounts, dates) per voice and per condition (clean, babble noise at
20/10/5 dB SNR, accent, connection) for three recognisers: the general LM, the domain LM,
and the domain LM + NATO code grammar (used for turns that expect a code).

Every utterance goes synthesize -> channel(condition) -> 8 kHz mu-law -> recognise. Test
sentences come from the EVA reference data when present (``EVAFLOW_EVA_ROOT`` or
``../shared/eva``): records are split in two, the domain LM is built from the first half's
opening turns (entities re-drawn, see ``tasks.voice.corpus``) and the second half is tested;
the entity carrier phrases ("The date is ...") are shared, so entity-sentence WER is
optimistic. Codes and IDs are said in the NATO alphabet. Prints tables and writes
``benchmarks/results_voice.json``; ``main()`` returns figures for ``python -m benchmarks``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import jiwer

import tasks.voice  # noqa: F401  (registers the babble noise source)
from perturbations import (
    CONDITIONS,
    ConditionSpec,
    NoiseParams,
    VoiceSpec,
    derive_seed,
    make_channel,
)
from tasks.spoken import Entity, entity_heard, extract_entities, normalize_spoken, render_spoken
from tasks.voice.corpus import domain_corpus
from tasks.voice.stt import Recognizer, SttSpec
from tasks.voice.telephony import from_wire, to_wire
from tasks.voice.tts import synthesize

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS = REPO_ROOT / "benchmarks" / "results_voice.json"
ENTITY_TYPES = ("code", "employee_id", "amount", "date")
FALLBACK_OPENINGS = [
    "Hi, I need to change my flight to a later date.",
    "I was locked out of my account this morning.",
    "I need help requesting a temporary extension for my license.",
    "Can you move me to an earlier flight today?",
    "I need to book a conference room for next week.",
    "I want to update my direct deposit information.",
]
CARRIERS = {
    "code": "{}",  # bare answer, as when the agent asks for the code
    "employee_id": "{}",
    "amount": "The most I can pay is {}.",
    "date": "The date is {}.",
}


@dataclass(frozen=True)
class Item:
    text: str  # written form (what the caller means)
    kind: str  # "general" or an entity type
    entities: tuple[Entity, ...] = ()


@dataclass
class Tally:
    refs: list[str] = field(default_factory=list)
    hyps: list[str] = field(default_factory=list)
    entity_hits: dict[str, list[int]] = field(default_factory=dict)

    def add(self, spoken: str, heard: str, item: Item) -> None:
        self.refs.append(normalize_spoken(spoken))
        self.hyps.append(normalize_spoken(heard) or "<nothing>")
        for entity in item.entities:
            if entity.type in ENTITY_TYPES:
                hits = self.entity_hits.setdefault(entity.type, [0, 0])
                hits[0] += entity_heard(entity, heard)
                hits[1] += 1

    def summary(self) -> dict[str, float | None]:
        out: dict[str, float | None] = {"wer": round(float(jiwer.wer(self.refs, self.hyps)), 3)}
        for kind in ENTITY_TYPES:
            hit, total = self.entity_hits.get(kind, [0, 0])
            out[f"{kind}_exact"] = round(hit / total, 3) if total else None
        return out


# ----------------------------------------------------------------------------- test data


def _eva_root() -> Path | None:
    env = os.environ.get("EVAFLOW_EVA_ROOT")
    for candidate in ([Path(env)] if env else []) + [REPO_ROOT.parent / "shared" / "eva"]:
        if (candidate / "data").is_dir():
            return candidate
    return None


def _records() -> list[dict]:
    root = _eva_root()
    if root is None:
        return []
    records: list[dict] = []
    for path in sorted((root / "data").glob("*_dataset.json")):
        records += json.loads(path.read_text(encoding="utf-8"))
    return records


def _entity_values(record: dict) -> list[tuple[str, str]]:
    """Key entities of a record's caller facts; codes are booking-style (5-8 symbols)."""
    info = record.get("user_goal", {}).get("information_required", {}) or {}
    found = []
    for key, value in info.items():
        if isinstance(value, int | float) and key.endswith("_usd"):
            found.append(("amount", f"${value:,}"))
        elif isinstance(value, str):
            for entity in extract_entities(value):
                if entity.type not in ENTITY_TYPES or entity.text != value.strip():
                    continue
                if entity.type == "code" and not 5 <= len(entity.value) <= 8:
                    continue
                found.append((entity.type, value.strip()))
    return found


def _values_by_type(records: list[dict]) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {k: [] for k in ENTITY_TYPES}
    for record in records:
        for kind, value in _entity_values(record):
            if value not in values[kind]:
                values[kind].append(value)
    return values


def build_sets(per_type: int, n_general: int, seed: int) -> tuple[list[str], list[Item]]:
    """(LM template texts from one half of the records, test items from the other half)."""
    records = _records()
    rng = random.Random(seed)
    rng.shuffle(records)
    half = len(records) // 2
    train, test = records[:half], records[half:]
    openings = [r.get("starting_utterances", {}).get("en", "") for r in train] or FALLBACK_OPENINGS
    test_openings = [r.get("starting_utterances", {}).get("en", "") for r in test]
    test_openings = [t for t in test_openings if t] or FALLBACK_OPENINGS
    templates = [t for t in openings if t]
    # Carrier templates with the *training* half's values: the LM learns their shapes
    # (corpus re-draws every value), the test half's values stay unseen.
    examples = {"code": ["ZK3FFW"], "employee_id": ["EMP048271"], "amount": ["$120"]}
    examples["date"] = ["2026-03-25"]
    for kind, values in _values_by_type(train).items():
        for value in values[:20] or examples[kind]:
            templates.append(CARRIERS[kind].format(value))
    items = [Item(t, "general", tuple(extract_entities(t))) for t in test_openings[:n_general]]
    fallback = {"code": ["QX7RTA", "M62JCV"], "employee_id": ["EMP193847"], "amount": ["$250"]}
    fallback["date"] = ["2027-11-03"]
    test_values = _values_by_type(test)
    for kind in ENTITY_TYPES:
        for value in (test_values[kind] or fallback[kind])[:per_type]:
            text = CARRIERS[kind].format(value)
            items.append(Item(text, kind, tuple(extract_entities(text))))
    return templates, items


# ----------------------------------------------------------------------------- running


def conditions() -> list[ConditionSpec]:
    noise = [
        ConditionSpec(name=f"babble {snr} dB", noise=NoiseParams(source="babble", snr_db=snr))
        for snr in (20, 10, 5)
    ]
    return [CONDITIONS.get("clean"), *noise, CONDITIONS.get("accent"), CONDITIONS.get("connection")]


def systems(corpus: list[str], cache: Path) -> dict[str, Recognizer]:
    return {
        "general LM": Recognizer(SttSpec(lm="general"), None, cache),
        "domain LM": Recognizer(SttSpec(lm="domain"), corpus, cache),
        "domain LM + code grammar": Recognizer(SttSpec(grammar="codes"), corpus, cache),
    }


def run_grid(voices: list[str], items: list[Item], recognizers: dict[str, Recognizer]) -> dict:
    grid: dict = {}
    timing = {"tts_s": 0.0, "audio_s": 0.0} | {f"stt_s:{n}": 0.0 for n in recognizers}
    for condition in conditions():
        cell_voices = ["(drawn per utterance)"] if condition.accent else voices
        for voice in cell_voices:
            tallies = {name: Tally() for name in recognizers}
            for index, item in enumerate(items):
                channel = make_channel(
                    condition, derive_seed("bench", condition.name, voice, index)
                )
                spoken = render_spoken(item.text, "nato")
                started = time.perf_counter()
                clip = synthesize(
                    spoken, channel.voice(VoiceSpec(voice=voices[0] if condition.accent else voice))
                )
                timing["tts_s"] += time.perf_counter() - started
                timing["audio_s"] += clip.duration_s
                heard_clip = from_wire(to_wire(channel.speech(clip)))
                expect = "code" if item.kind in ("code", "employee_id") else None
                for name, recognizer in recognizers.items():
                    started = time.perf_counter()
                    heard = recognizer.recognize(heard_clip, expect)  # type: ignore[arg-type]
                    timing[f"stt_s:{name}"] += time.perf_counter() - started
                    tallies[name].add(spoken, heard, item)
            for name, tally in tallies.items():
                grid.setdefault(name, {}).setdefault(condition.name, {})[voice] = tally.summary()
            print(
                f"  {condition.name:<12} {voice:<22} "
                + "  ".join(
                    f"{n.split()[0][:3]}/{'g' if 'grammar' in n else 'lm'} WER {t.summary()['wer']:.2f}"
                    for n, t in tallies.items()
                ),
                flush=True,
            )
    return {"grid": grid, "timing": timing}


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(sum(present) / len(present), 3) if present else None


def format_tables(grid: dict) -> str:
    lines = []
    columns = ["wer", *[f"{k}_exact" for k in ENTITY_TYPES]]
    header = f"{'system':<26}{'condition':<14}{'voice':<24}" + "".join(f"{c:>18}" for c in columns)
    lines += [header, "-" * len(header)]
    for system, by_condition in grid.items():
        for condition, by_voice in by_condition.items():
            rows = list(by_voice.items())
            if len(rows) > 1:
                mean = {c: _mean([r[c] for _, r in rows]) for c in columns}
                rows.append(("mean of voices", mean))
            for voice, row in rows:
                cells = "".join(
                    f"{'-' if row[c] is None else format(row[c], '.3f'):>18}" for c in columns
                )
                lines.append(f"{system:<26}{condition:<14}{voice:<24}{cells}")
    return "\n".join(lines)


def figures(result: dict) -> list[dict]:
    timing, grid = result["timing"], result["grid"]
    audio = timing["audio_s"] or 1.0
    out = [{"name": "TTS real-time factor (espeak)", "value": timing["tts_s"] / audio, "unit": "x"}]
    for system in grid:
        out.append(
            {
                "name": f"STT real-time factor ({system})",
                "value": timing[f"stt_s:{system}"] / audio,
                "unit": "x",
            }
        )
        for condition, by_voice in grid[system].items():
            rows = list(by_voice.values())
            note = f"mean over {len(rows)} voice(s)"
            out.append(
                {
                    "name": f"WER {system} / {condition}",
                    "value": _mean([r["wer"] for r in rows]),
                    "note": note,
                }
            )
            for kind in ENTITY_TYPES:
                value = _mean([r[f"{kind}_exact"] for r in rows])
                if condition == "clean" or kind == "code":
                    out.append(
                        {
                            "name": f"{kind} exact {system} / {condition}",
                            "value": value,
                            "note": note,
                        }
                    )
    return out


def run(quick: bool) -> dict:
    voices = ["en-us+klatt3", "en-us"] if quick else ["en-us+klatt3", "en-us", "en-gb"]
    templates, items = build_sets(per_type=2 if quick else 3, n_general=3 if quick else 6, seed=7)
    corpus = domain_corpus(templates, 3000, seed=11)
    with tempfile.TemporaryDirectory(prefix="evaflow-voice-bench-") as cache:
        recognizers = systems(corpus, Path(cache))
        print(
            f"{len(items)} utterances x {len(voices)} voices x {len(conditions())} conditions",
            flush=True,
        )
        result = run_grid(voices, items, recognizers)
    result |= {"voices": voices, "items": [item.text for item in items], "quick": quick}
    result["figures"] = figures(result)
    return result


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.voice", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="2 voices, fewer utterances")
    # Called without argv (as ``python -m benchmarks`` does), the process's own argv is
    # not ours to parse.
    args = parser.parse_args(argv or [])
    quick = args.quick or os.environ.get("EVAFLOW_BENCH_QUICK") == "1"
    started = time.perf_counter()
    result = run(quick)
    result["wall_s"] = round(time.perf_counter() - started, 1)
    print("\n" + format_tables(result["grid"]))
    audio = result["timing"]["audio_s"]
    print(f"\naudio synthesised: {audio:.0f} s; wall time {result['wall_s']} s")
    for fig in result["figures"][: 1 + len(result["grid"])]:
        print(f"{fig['name']}: {fig['value']:.4f}")
    RESULTS.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(f"wrote {RESULTS}")
    return {"figures": result["figures"]}


if __name__ == "__main__":
    main(sys.argv[1:])
