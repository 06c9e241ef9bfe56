"""Text to speech behind a registry, so stronger engines plug in next to eSpeak NG.

``synthesize(text, voice, engine="espeak")`` returns a ``Clip`` (eSpeak: 22.05 kHz).
Engines are callables ``(text, voice) -> Clip`` registered in ``TTS_ENGINES``:

* ``espeak`` (default, always available): the library bundled by ``espeakng-loader``.
  Any English accent voice plus variant, e.g. ``en-gb-scotland+klatt3`` (see
  ``tasks.voice.espeak.english_voices`` / ``variants``).
* ``piper`` (optional extra ``evaflow[piper]``): ``voice.voice`` is the path of a local
  ``.onnx`` voice model the user provides; nothing is downloaded.
* ``openai``, ``elevenlabs``, ``cartesia``: hosted APIs, one module each in
  ``tasks/voice/providers/`` (keys and base URLs from the environment).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np

from evaflow_core.registry import Registry
from perturbations.audio import Clip, VoiceSpec
from tasks.voice.espeak import espeak_synth

TtsEngine = Callable[[str, VoiceSpec], Clip]
# Hosted engines (tasks/voice/providers/) are imported on the first lookup, not here.
TTS_ENGINES: Registry[TtsEngine] = Registry(
    "TTS engine", package="tasks.voice.providers", entry_point_group="evaflow.tts"
)

# An engine's one-off set-up (a client library's import, its connection pool), keyed by
# engine name; hosted engines register one next to the engine.
TTS_WARMERS: dict[str, Callable[[VoiceSpec], None]] = {}

ESPEAK_RATE = 22050


class TtsError(RuntimeError):
    """Synthesis failed; the message names the engine, voice and text."""


def synthesize(text: str, voice: VoiceSpec | None = None, engine: str = "espeak") -> Clip:
    """Speech for ``text`` (non-empty) in ``voice`` with the named engine."""
    if not text or not text.strip():
        raise ValueError("synthesize: text is empty")
    return TTS_ENGINES.get(engine)(text, voice or VoiceSpec())


def prepare_engine(engine: str, voice: VoiceSpec) -> None:
    """Pay ``engine``'s one-off costs for ``voice`` now, before a call's clock runs, so the
    first caller turn's latency does not carry them (a hosted engine imports LiteLLM or its
    SDK: seconds). Sends nothing and never raises: a broken voice fails at its first turn."""
    try:
        TTS_ENGINES.get(engine)  # imports the hosted engines' modules on the first lookup
    except KeyError:
        return
    warmer = TTS_WARMERS.get(engine)
    if warmer is not None:
        warmer(voice)


@TTS_ENGINES.register("espeak")
def espeak_tts(text: str, voice: VoiceSpec) -> Clip:
    pcm, rate = espeak_synth(
        text, voice.voice, voice.rate_wpm, voice.pitch, voice.pitch_range, voice.word_gap_ms
    )
    if pcm.size == 0:
        raise TtsError(f"espeak produced no audio for voice {voice.voice!r}, text {text[:60]!r}")
    return Clip.from_int16(pcm, rate)


# ----------------------------------------------------------------------------- piper (extra)

_PIPER_LOCK = threading.Lock()


@lru_cache(maxsize=4)
def _load_piper(model_path: str) -> object:
    try:
        from piper import PiperVoice  # type: ignore[import-not-found]
    except ImportError as exc:
        raise TtsError("the 'piper' engine needs the extra: pip install 'evaflow[piper]'") from exc
    path = Path(model_path)
    if path.suffix != ".onnx" or not path.is_file():
        raise TtsError(
            f"piper voice must be a local .onnx model file (with its .onnx.json); got {model_path!r}"
        )
    return PiperVoice.load(str(path))


@TTS_ENGINES.register("piper")
def piper_tts(text: str, voice: VoiceSpec) -> Clip:
    model = _load_piper(voice.voice)
    # piper's length_scale is a duration factor: 165 wpm (our default) = 1.0.
    from piper import SynthesisConfig  # type: ignore[import-not-found]

    config = SynthesisConfig(length_scale=165 / voice.rate_wpm)
    with _PIPER_LOCK:
        chunks = list(model.synthesize(text, syn_config=config))  # type: ignore[attr-defined]
    if not chunks:
        raise TtsError(f"piper produced no audio for {text[:60]!r}")
    pcm = np.concatenate([np.frombuffer(c.audio_int16_bytes, dtype=np.int16) for c in chunks])
    return Clip.from_int16(pcm, int(chunks[0].sample_rate))
