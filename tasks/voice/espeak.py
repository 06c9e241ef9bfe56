"""A small ctypes binding to the eSpeak NG library bundled by the ``espeakng-loader`` wheel.

The library keeps global state (one voice, one parameter set, one callback), so every
synthesis runs under one process-wide lock; it is safe to call from many threads but they
take turns. Synthesis is fast (about 1 ms per second of speech), so the lock is cheap.

Reproducibility: eSpeak also carries hidden state from one utterance to the next, so by
default synthesis runs in a helper process that forks a pristine child per utterance
(``tasks.voice.espeak_zygote``): the same text and voice give the same bytes whatever was
synthesised before. Set ``EVAFLOW_ESPEAK_INPROCESS=1`` (or run where ``fork`` is missing)
to synthesise in-process instead: a little faster, not byte-reproducible.

Voice names: users write language codes ("en-gb", "en-gb-scotland+klatt3"), but
``espeak_SetVoiceByName`` wants voice *file* names ("en" for en-gb). ``resolve_voice``
maps one to the other by reading the ``language`` lines of the bundled voice files.
"""

from __future__ import annotations

import atexit
import ctypes
import json
import os
import struct
import subprocess
import sys
import threading
from functools import lru_cache
from pathlib import Path

import numpy as np

from tasks.voice.espeak_frames import read_message, write_message

_AUDIO_OUTPUT_SYNCHRONOUS = 2
_CHARS_UTF8 = 1
_PARAM_RATE, _PARAM_VOLUME, _PARAM_PITCH, _PARAM_RANGE, _PARAM_WORDGAP = 1, 2, 3, 4, 7
_DEFAULT_VOLUME = 100
_RAND_SEED = 1
# espeak's word gap is in units of 10 ms at the default speed.
_WORDGAP_UNIT_MS = 10

_SYNTH_CALLBACK = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p
)


class VoiceNotFoundError(ValueError):
    """Unknown voice or variant; the message lists what exists."""


@lru_cache(maxsize=1)
def data_path() -> Path:
    import espeakng_loader

    return Path(espeakng_loader.get_data_path())


@lru_cache(maxsize=1)
def voice_files() -> dict[str, str]:
    """Language code (lower case) -> voice file name, best priority first.

    Also maps each file name (lower case) to itself so "en-GB-x-rp" works as written.
    """
    best: dict[str, tuple[int, str]] = {}
    for path in sorted((data_path() / "lang").rglob("*")):
        if not path.is_file():
            continue
        best.setdefault(path.name.lower(), (-1, path.name))
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0] == "language":
                priority = int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else 5
                code = parts[1].lower()
                if code not in best or priority < best[code][0]:
                    best[code] = (priority, path.name)
    return {code: name for code, (_, name) in best.items()}


@lru_cache(maxsize=1)
def variants() -> list[str]:
    """Variant names (``+m1``, ``+klatt3``, ...) shipped with the library."""
    return sorted(p.name for p in (data_path() / "voices" / "!v").iterdir() if p.is_file())


def english_voices() -> list[str]:
    """English accent voices (language codes), e.g. en-us, en-gb-scotland, en-029."""
    # "en" duplicates en-gb and "en-shaw" is the Shavian alphabet, not an accent.
    return sorted(c for c in voice_files() if c.startswith("en-") and c != "en-shaw")


def resolve_voice(voice: str) -> str:
    """ "en-gb-scotland+klatt3" -> "en-GB-scotland+klatt3" (the name eSpeak accepts)."""
    language, _, variant = voice.strip().partition("+")
    name = voice_files().get(language.lower())
    if name is None:
        close = [c for c in voice_files() if c.startswith(language.lower()[:2])][:12]
        raise VoiceNotFoundError(
            f"unknown eSpeak voice {language!r}; similar voices: {', '.join(close) or 'none'}"
        )
    if variant:
        if variant not in variants():
            raise VoiceNotFoundError(
                f"unknown eSpeak variant {variant!r} in {voice!r}; valid: {', '.join(variants())}"
            )
        return f"{name}+{variant}"
    return name


class _Espeak:
    """The loaded library; one instance per process (see module docstring)."""

    def __init__(self) -> None:
        import espeakng_loader

        self.lib = ctypes.CDLL(espeakng_loader.get_library_path())
        self.lib.espeak_Initialize.restype = ctypes.c_int
        self.lib.espeak_Initialize.argtypes = [
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.c_int,
        ]
        self.lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        self.lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        self.lib.espeak_ng_SetRandSeed.argtypes = [ctypes.c_long]
        self.lib.espeak_Synth.argtypes = [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_uint,
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint,
            ctypes.c_void_p,
            ctypes.c_void_p,
        ]
        path = str(data_path()).encode()
        self.rate = int(self.lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, path, 0))
        if self.rate <= 0:
            raise RuntimeError(f"espeak_Initialize failed (returned {self.rate})")
        self.chunks: list[np.ndarray] = []
        # Keep a reference: ctypes callbacks are freed when garbage-collected.
        self._callback = _SYNTH_CALLBACK(self._collect)
        self.lib.espeak_SetSynthCallback(self._callback)

    def _collect(self, wav: ctypes._Pointer, n: int, _events: int) -> int:
        if n > 0 and wav:
            self.chunks.append(np.ctypeslib.as_array(wav, shape=(n,)).copy())
        return 0  # 0 = continue synthesis

    def synth(self, text: str, voice: str, params: dict[int, int]) -> np.ndarray:
        if self.lib.espeak_SetVoiceByName(voice.encode()) != 0:
            raise VoiceNotFoundError(f"eSpeak refused voice {voice!r}")
        for param, value in params.items():
            self.lib.espeak_SetParameter(param, value, 0)
        self.chunks = []
        # eSpeak adds random jitter (and keeps its state between calls); a fixed seed per
        # utterance makes the same text in the same voice byte-identical every time.
        self.lib.espeak_ng_SetRandSeed(_RAND_SEED)
        data = text.encode("utf-8") + b"\0"
        status = self.lib.espeak_Synth(data, len(data), 0, 0, 0, _CHARS_UTF8, None, None)
        if status != 0:
            raise RuntimeError(f"espeak_Synth failed with status {status} for {text[:40]!r}")
        self.lib.espeak_Synchronize()
        if not self.chunks:
            return np.zeros(0, dtype=np.int16)
        return np.concatenate(self.chunks).astype(np.int16)


class _Zygote:
    """Client of the helper process (see the module docstring)."""

    def __init__(self) -> None:
        script = Path(__file__).with_name("espeak_zygote.py")
        self.proc = subprocess.Popen(
            [sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.owner_pid = os.getpid()  # a forked copy of this process must not share the pipes
        atexit.register(self.close)

    def synth(self, text: str, voice: str, params: dict[int, int]) -> tuple[np.ndarray, int]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        request = json.dumps({"text": text, "voice": voice, "params": params}).encode()
        write_message(self.proc.stdin, request)
        reply = read_message(self.proc.stdout)
        if reply is None:
            raise RuntimeError(f"eSpeak helper process died (exit code {self.proc.poll()})")
        (rate,) = struct.unpack(">i", reply[:4])
        if rate < 0:
            raise RuntimeError(f"eSpeak failed for voice {voice!r}: {reply[4:].decode()}")
        return np.frombuffer(reply[4:], dtype="<i2").astype(np.int16), rate

    def close(self) -> None:
        if self.owner_pid == os.getpid() and self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=5)


def _use_zygote() -> bool:
    return hasattr(os, "fork") and os.environ.get("EVAFLOW_ESPEAK_INPROCESS", "") in ("", "0")


_LOCK = threading.Lock()
_ENGINE: _Espeak | None = None
_ZYGOTE: _Zygote | None = None


def espeak_synth(
    text: str, voice: str, rate_wpm: int, pitch: int, pitch_range: int, word_gap_ms: int
) -> tuple[np.ndarray, int]:
    """PCM16 samples and sample rate (22050 Hz) for ``text`` in ``voice``."""
    global _ENGINE, _ZYGOTE
    resolved = resolve_voice(voice)
    params = {
        _PARAM_RATE: rate_wpm,
        _PARAM_VOLUME: _DEFAULT_VOLUME,
        _PARAM_PITCH: pitch,
        _PARAM_RANGE: pitch_range,
        _PARAM_WORDGAP: round(word_gap_ms / _WORDGAP_UNIT_MS),
    }
    with _LOCK:
        if _use_zygote():
            zygote = _ZYGOTE
            if zygote is None or zygote.owner_pid != os.getpid() or zygote.proc.poll() is not None:
                zygote = _ZYGOTE = _Zygote()
            return zygote.synth(text, resolved, params)
        if _ENGINE is None:
            _ENGINE = _Espeak()
        return _ENGINE.synth(text, resolved, params), _ENGINE.rate
