"""What the speech recognisers share: the configuration (``SttSpec``), the engine registry,
sentences as decoder words (``lm_tokens``, ``build_domain_lm``), code grammars, the small
dictionary and the audio preparation. ``tasks.voice.stt`` (the ``Recognizer``) and the
engine backends (``tasks.voice.stt_engines``) both import it, so neither imports the other's
half back.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evaflow_core.registry import Registry
from perturbations.audio import AudioError, Clip
from tasks.spoken import render_spoken
from tasks.spoken.words import DIGIT_WORDS, NATO
from tasks.voice.telephony import resample

DECODER_RATE = 16000
MIN_INPUT_RATE = 8000  # telephone band; below it speech is not intelligible
_LM_BUILDER_VERSION = "1"


class SttSpec(BaseModel):
    """One speech recogniser configuration (a "system" in the benchmark)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    engine: str = Field(default="pocketsphinx", description="Name in STT_ENGINES.")
    lm: Literal["general", "domain"] = Field(
        default="domain", description="Language model: bundled general LM or domain trigram LM."
    )
    grammar: Literal["none", "codes"] = Field(
        default="none", description="'codes': JSGF symbol grammar for turns expecting a code."
    )
    code_alphabet: Literal["nato", "letters", "both"] = Field(
        default="nato",
        description="Symbols of the code grammar. Spelled letters are slow (RTF 3-5) and "
        "rarely exact; NATO words are fast and far more accurate.",
    )
    grammar_beam: float | None = Field(
        default=None, gt=0, lt=1, description="Beam of the grammar decoder (None: default)."
    )
    noise_floor_dbfs: float | None = Field(
        default=-50.0, le=-20, description="White-noise floor added before decoding (None: off)."
    )
    band_fill: bool = Field(
        default=True, description="Fill the empty band above the source Nyquist after upsampling."
    )
    band_fill_dbfs: float = Field(default=-60.0, le=-30, description="Level of the band fill.")
    telephone_variants: bool = Field(
        default=True,
        description="Add pronunciations of words whose sounds the telephone band removes "
        "(TELEPHONE_VARIANTS).",
    )
    model_path: str | None = Field(
        default=None, description="Engine model directory/file for engines that need one."
    )
    version: str = Field(default="1", description="Spec version; bump when semantics change.")

    @property
    def name(self) -> str:
        grammar = "+codes" if self.grammar == "codes" else ""
        return f"{self.engine}:{self.lm}{grammar}"


class SttBackend(Protocol):
    def recognize(self, pcm16k: np.ndarray, expect: Expectation) -> str: ...


SttFactory = Callable[[SttSpec, list[str] | None, Path], SttBackend]
STT_ENGINES: Registry[SttFactory] = Registry("STT engine", entry_point_group="evaflow.stt")


# ----------------------------------------------------------------------------- text for LMs


def lm_tokens(text: str) -> str:
    """One sentence as the decoder's words: spoken form, lower case, no punctuation."""
    spoken = render_spoken(text)
    # eSpeak spells short all-caps words ("PM", "ID", "NPI") letter by letter.
    spoken = re.sub(r"\b[A-Z]{2,3}\b", lambda m: " ".join(m.group(0)), spoken)
    spoken = spoken.lower().replace("x-ray", "xray")
    words = re.findall(r"[a-z]+(?:'[a-z]+)?", spoken)
    return " ".join("x-ray" if w == "xray" else w for w in words)


def build_domain_lm(sentences: list[str], cache_dir: Path | str) -> Path:
    """ARPA trigram LM from ``sentences`` (written or spoken), cached by content hash."""
    # A domain corpus repeats its lines (1,500 drawn from a few dozen templates): tokenise each once.
    lines = sorted({tokens for s in set(sentences) if (tokens := lm_tokens(s))})
    if not lines:
        raise ValueError("build_domain_lm: no usable sentences (all empty after tokenising)")
    text = "\n".join(lines) + "\n"
    digest = hashlib.sha256(f"{_LM_BUILDER_VERSION}\n{text}".encode()).hexdigest()[:16]
    cache = Path(cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"domain-{digest}.lm"
    if path.is_file():
        return path
    from pocketsphinx.lm import ArpaBoLM

    model = ArpaBoLM(text=text, add_start=True)
    model.compute()
    tmp = path.with_suffix(f".tmp{threading.get_ident()}")
    model.write_file(str(tmp))
    tmp.replace(path)  # atomic: concurrent builders never see a half-written file
    return path


CODE_LEAD_INS = ["it is", "my code is", "the code is", "the number is", "yes", "sure"]
# Shape of an expected code: L letter, D digit, X either, "-" an optional spoken "dash".
SHAPE_SYMBOLS = frozenset("LDX-")
MAX_SHAPE = 24
Expectation = str | None
"""What a turn is expected to hold: None (free speech, the LM), "code" (any spelled code,
the code grammar) or "code:<shape>" (a code of a known format, e.g. "code:LLLDDDDDD")."""


def code_shape(value: str) -> str | None:
    """The format an agent knows for a code from its tool schema, or None.

    Digits-only values ("1654", "555-0101") keep each digit position; a letter prefix
    followed by digits ("EMP889675", "SHF-2026") keeps letters and digits apart, as an ID
    format does; any other code keeps only its length ("63FFEV" -> "XXXXXX"). Words and
    names (lower case letters) have no format a schema could give.
    """
    compact = value.strip()
    if not re.fullmatch(r"[A-Z0-9]+(?:-[A-Z0-9]+)*", compact) or len(compact) > MAX_SHAPE:
        return None  # lower case: a word or a name, not a code
    if not any(c.isdigit() for c in compact) and len(compact) < 4:
        return None
    if re.fullmatch(r"[0-9-]+", compact) or re.fullmatch(r"[A-Z]{1,4}-?[0-9-]+", compact):
        return "".join("D" if c.isdigit() else "L" if c.isalpha() else "-" for c in compact)
    return "".join("-" if c == "-" else "X" for c in compact)


def parse_expectation(expect: Expectation) -> str | None:
    """The shape of a "code:<shape>" expectation ("" for plain "code"); None for free speech.

    Raises ValueError naming the bad value otherwise."""
    if expect is None:
        return None
    if expect == "code":
        return ""
    shape = expect[5:] if expect.startswith("code:") else None
    if not shape or len(shape) > MAX_SHAPE or not set(shape) <= SHAPE_SYMBOLS:
        raise ValueError(
            f"recognize: expect must be None, 'code' or 'code:<shape>' with shape letters "
            f"L, D, X and '-' (at most {MAX_SHAPE}), got {expect!r}"
        )
    return shape


def code_symbols(alphabet: Literal["nato", "letters", "both"] = "both") -> list[str]:
    """Words a spelled code is made of: digit words, "oh" and letters and/or NATO words
    (spellings the dictionary knows)."""
    letters = {chr(c) for c in range(ord("a"), ord("z") + 1)}
    nato = set(NATO) - {"xray", "alfa", "juliett", "whisky"}
    chosen = {"nato": nato, "letters": letters, "both": nato | letters}[alphabet]
    return sorted(chosen | set(DIGIT_WORDS) | {"oh"})


def code_grammar(alphabet: Literal["nato", "letters", "both"] = "nato") -> str:
    """JSGF grammar: an optional short lead-in, then one or more spelled symbols."""
    symbols = " | ".join(code_symbols(alphabet))
    return (
        "#JSGF V1.0;\ngrammar codes;\n"
        f"public <utterance> = [{' | '.join(CODE_LEAD_INS)}] (<symbol> | dash)+;\n"
        f"<symbol> = {symbols};\n"
    )


def shape_grammar(shape: str, alphabet: Literal["nato", "letters", "both"] = "both") -> str:
    """JSGF grammar for one code format: an optional lead-in, then exactly one spelled
    symbol per position (a dash position may be said or not)."""
    if not shape or not set(shape) <= SHAPE_SYMBOLS:
        raise ValueError(f"shape_grammar: bad shape {shape!r} (letters L, D, X and '-')")
    digits = sorted(set(DIGIT_WORDS) | {"oh"})
    letters = [s for s in code_symbols(alphabet) if s not in digits]
    parts = {"L": "<letter>", "D": "<digit>", "X": "(<letter> | <digit>)", "-": "[dash]"}
    body = " ".join(parts[c] for c in shape)
    return (
        "#JSGF V1.0;\ngrammar shape;\n"
        f"public <utterance> = [{' | '.join(CODE_LEAD_INS)}] {body};\n"
        f"<letter> = {' | '.join(letters)};\n"
        f"<digit> = {' | '.join(digits)};\n"
    )


# Over the telephone band (< 4 kHz) the /s/ sounds of "six" are mostly gone and the
# wideband acoustic model hears "eight" or "three"; pronunciations without one /s/ let the
# decoder match what is left. Measured over 8 kHz mu-law: 6-digit strings in a digit
# grammar, exact, en-us+klatt3 0.70 -> 0.90, en-us+f2 0.25 -> 0.45; caller lines of the
# built-in pack with the domain LM (two held-apart slices), entity exact 0.70 -> 0.97 and
# 0.71 -> 0.85, WER 0.13 -> 0.06 and 0.15 -> 0.10.
TELEPHONE_VARIANTS: dict[str, list[str]] = {"six": ["IH K S", "S IH K"]}


def build_small_dictionary(words: set[str], out_path: Path) -> Path:
    """The cmudict entries of ``words`` only: a decoder with the full 134k-word dictionary
    takes seconds to build its search, with this one milliseconds (same results, since
    words outside the LM/grammar are unreachable anyway)."""
    if out_path.is_file():
        return out_path
    from pocketsphinx import get_model_path

    full = Path(get_model_path("en-us/cmudict-en-us.dict"))
    with full.open(encoding="utf-8") as src:
        lines = [ln for ln in src if ln.split(" ", 1)[0].split("(")[0] in words]
    tmp = out_path.with_suffix(f".tmp{threading.get_ident()}")
    tmp.write_text("".join(lines), encoding="utf-8")
    tmp.replace(out_path)
    return out_path


# ----------------------------------------------------------------------------- audio prep


def _white(n: int, dbfs: float, seed: int) -> np.ndarray:
    sigma = 10 ** (dbfs / 20)
    return np.random.default_rng(seed).standard_normal(n) * sigma


def prepare_audio(clip: Clip, spec: SttSpec) -> np.ndarray:
    """int16 PCM at 16 kHz as the decoder wants it (upsampled, band-filled, noise floor).

    The added noise is seeded by a constant, so the same clip always decodes the same way.
    """
    clip.validate()
    if clip.rate < MIN_INPUT_RATE:
        raise AudioError(
            f"speech recognition needs at least {MIN_INPUT_RATE} Hz audio, got {clip.rate} Hz"
        )
    source_rate = clip.rate
    samples = resample(clip, DECODER_RATE).samples.astype(np.float64)
    if spec.band_fill and source_rate < DECODER_RATE:
        from scipy.signal import butter, sosfilt  # 0.6 s to import: only when decoding

        cutoff = 0.95 * source_rate / 2
        sos = butter(6, cutoff, btype="highpass", fs=DECODER_RATE, output="sos")
        # Filtered white noise has ~(1 - cutoff/nyquist) of the power; rescale to the level.
        keep = 1 - cutoff / (DECODER_RATE / 2)
        samples = samples + sosfilt(sos, _white(samples.size, spec.band_fill_dbfs, 1)) / np.sqrt(
            keep
        )
    if spec.noise_floor_dbfs is not None:
        samples = samples + _white(samples.size, spec.noise_floor_dbfs, 2)
    return np.clip(np.round(samples * 32768), -32768, 32767).astype(np.int16)
