"""Speech to text behind a registry; PocketSphinx (offline, bundled en-US model) by default.

The choices that matter on synthetic telephone speech are explicit ``SttSpec`` options,
because each combination is a different "system" to compare:

* ``lm="general"``: the bundled 27 MB general LM (unusable on eSpeak speech, WER ~0.7);
  ``lm="domain"``: a trigram LM built from the scenarios' own sentence templates
  (``build_domain_lm``, cached by content hash).
* ``grammar="codes"``: turns that expect a code (``recognize(clip, expect="code")``) are
  decoded with a JSGF grammar of letters, digits and NATO words instead of the LM.
* ``noise_floor_dbfs``: exact digital silence breaks the decoder, so low white noise is added.
* ``band_fill``: 8 kHz audio is upsampled to 16 kHz and the empty 4-8 kHz band is filled
  with very low noise (decoding 8 kHz natively, or leaving the band empty, is much worse).

Thread safety: a ``Recognizer`` owns one decoder and serialises calls with a lock; create
one ``Recognizer`` per worker thread to decode in parallel.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

# The backends register themselves in STT_ENGINES on import.
import tasks.voice.stt_engines  # noqa: F401
from perturbations.audio import AudioError, Clip
from tasks.voice.stt_base import (
    CODE_LEAD_INS,
    DECODER_RATE,
    MAX_SHAPE,
    MIN_INPUT_RATE,
    SHAPE_SYMBOLS,
    STT_ENGINES,
    TELEPHONE_VARIANTS,
    Expectation,
    SttBackend,
    SttFactory,
    SttSpec,
    build_domain_lm,
    build_small_dictionary,
    code_grammar,
    code_shape,
    code_symbols,
    lm_tokens,
    parse_expectation,
    prepare_audio,
    shape_grammar,
)

__all__ = [
    "CODE_LEAD_INS",
    "DECODER_RATE",
    "MAX_SHAPE",
    "MIN_INPUT_RATE",
    "SHAPE_SYMBOLS",
    "STT_ENGINES",
    "TELEPHONE_VARIANTS",
    "Expectation",
    "SttBackend",
    "SttFactory",
    "SttSpec",
    "build_domain_lm",
    "build_small_dictionary",
    "code_grammar",
    "code_shape",
    "code_symbols",
    "lm_tokens",
    "parse_expectation",
    "prepare_audio",
    "shape_grammar",
    "Recognizer",
    "default_cache_dir",
]


# ----------------------------------------------------------------------------- recognizer


def default_cache_dir() -> Path:
    """Where built LMs go when no cache_dir is given: $EVAFLOW_CACHE_DIR/lm or
    ~/.cache/evaflow/lm (outside the repository, so caches are never committed)."""
    root = os.environ.get("EVAFLOW_CACHE_DIR")
    return (Path(root) if root else Path.home() / ".cache" / "evaflow") / "lm"


class Recognizer:
    """Decode clips with one configured engine; see the module docstring on threads."""

    def __init__(
        self,
        spec: SttSpec | None = None,
        corpus_sentences: list[str] | None = None,
        cache_dir: Path | str | None = None,
    ) -> None:
        self.spec = spec or SttSpec()
        if self.spec.lm == "domain" and not corpus_sentences:
            raise ValueError(
                "SttSpec.lm='domain' needs corpus_sentences (see tasks.voice.corpus.domain_corpus)"
            )
        factory = STT_ENGINES.get(self.spec.engine)
        cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._backend = factory(self.spec, corpus_sentences, cache)
        self._lock = threading.Lock()

    def recognize(self, clip: Clip, expect: Expectation = None) -> str:
        """Recognised words (lower case, no punctuation; "" when nothing was heard).

        ``expect="code"`` uses the code grammar and ``expect="code:<shape>"`` a grammar of
        that code format when ``spec.grammar == "codes"`` (see :data:`Expectation`).
        """
        if not isinstance(clip, Clip):
            raise AudioError(f"recognize expects a Clip, got {type(clip).__name__}")
        parse_expectation(expect)
        pcm = prepare_audio(clip, self.spec)
        with self._lock:
            return self._backend.recognize(pcm, expect)
