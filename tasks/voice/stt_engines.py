"""STT engine backends registered in ``STT_ENGINES`` (``tasks.voice.stt_base``).

* ``pocketsphinx``: offline, the wheel ships the en-US acoustic model and dictionary.
* ``faster-whisper`` (optional extra ``evaflow[whisper]``): reads a local CTranslate2 model
  directory given as ``SttSpec.model_path``; nothing is downloaded.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from tasks.voice.stt_base import (
    CODE_LEAD_INS,
    STT_ENGINES,
    TELEPHONE_VARIANTS,
    Expectation,
    SttSpec,
    build_domain_lm,
    build_small_dictionary,
    code_grammar,
    code_symbols,
    parse_expectation,
    shape_grammar,
)

_LM_SEARCH = "lm"
_CODE_SEARCH = "codes"
log = logging.getLogger(__name__)


def _arpa_words(path: Path) -> set[str]:
    words: set[str] = set()
    in_unigrams = False
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.startswith("\\1-grams"):
                in_unigrams = True
            elif line.startswith("\\2-grams") or line.startswith("\\end"):
                break
            elif in_unigrams and line.strip():
                words.add(line.split()[1])
    return words


def _add_variants(decoder: Any) -> None:
    """Alternative pronunciations ("six(2)") of the words the phone band damages."""
    for word, variants in TELEPHONE_VARIANTS.items():
        for number, phones in enumerate(variants, start=2):
            decoder.add_word(f"{word}({number})", phones, True)


class PocketSphinxBackend:
    """One pocketsphinx decoder with an LM search and, optionally, the code grammar."""

    def __init__(self, spec: SttSpec, corpus: list[str] | None, cache_dir: Path) -> None:
        from pocketsphinx import Decoder, get_model_path

        if spec.lm == "domain":
            assert corpus  # checked by Recognizer
            lm_path = build_domain_lm(corpus, cache_dir)
            words = _arpa_words(lm_path) | set(code_symbols("both")) | {"dash"}
            words |= {w for lead in CODE_LEAD_INS for w in lead.split()}
            dictionary = build_small_dictionary(words, lm_path.with_suffix(".dict"))
        else:
            lm_path = Path(get_model_path("en-us/en-us.lm.bin"))
            dictionary = Path(get_model_path("en-us/cmudict-en-us.dict"))
        self.spec = spec
        self.decoder = Decoder(lm=None, dict=str(dictionary), loglevel="FATAL")
        self.decoder.add_lm_file(_LM_SEARCH, str(lm_path))
        self.decoder.activate_search(_LM_SEARCH)
        # The grammar gets its own decoder: beams are decoder-wide settings.
        self.grammar_decoder = None
        if spec.grammar == "codes":
            beams = {}
            if spec.grammar_beam is not None:
                beams = {"beam": spec.grammar_beam, "pbeam": spec.grammar_beam}
            self.grammar_decoder = Decoder(lm=None, dict=str(dictionary), loglevel="FATAL", **beams)
            self.grammar_decoder.add_jsgf_string(_CODE_SEARCH, code_grammar(spec.code_alphabet))
            self.grammar_decoder.activate_search(_CODE_SEARCH)
        if spec.telephone_variants:
            for decoder in (self.decoder, self.grammar_decoder):
                if decoder is not None:
                    _add_variants(decoder)
        self._shapes: set[str] = set()

    def _grammar_search(self, shape: str) -> str:
        """The search for a code of ``shape`` ("" = any code), added on first use."""
        assert self.grammar_decoder is not None
        if not shape:
            return _CODE_SEARCH
        name = f"shape_{shape.replace('-', 'h')}"
        if shape not in self._shapes:
            grammar = shape_grammar(shape, self.spec.code_alphabet)
            self.grammar_decoder.add_jsgf_string(name, grammar)
            self._shapes.add(shape)
        return name

    def recognize(self, pcm16k: np.ndarray, expect: Expectation) -> str:
        shape = parse_expectation(expect)
        decoder = self.decoder
        if shape is not None and self.grammar_decoder is not None:
            decoder = self.grammar_decoder
            decoder.activate_search(self._grammar_search(shape))
        decoder.start_utt()
        decoder.process_raw(pcm16k.tobytes(), no_search=False, full_utt=True)
        decoder.end_utt()
        hyp = decoder.hyp()
        text = hyp.hypstr if hyp is not None else ""
        # Filler tokens like <sil> or [NOISE] never reach the hypothesis string, but
        # alternative pronunciations do ("a(2)"); strip those markers.
        return " ".join(w.split("(")[0] for w in text.split())


@STT_ENGINES.register("pocketsphinx")
def pocketsphinx_engine(spec: SttSpec, corpus: list[str] | None, cache_dir: Path):
    return PocketSphinxBackend(spec, corpus, cache_dir)


class FasterWhisperBackend:
    """faster-whisper on a local model directory (the user provides the weights)."""

    def __init__(self, spec: SttSpec, corpus: list[str] | None, cache_dir: Path) -> None:
        try:
            from faster_whisper import WhisperModel  # type: ignore[import-not-found]
        except ImportError as exc:
            raise RuntimeError(
                "the 'faster-whisper' engine needs the extra: pip install 'evaflow[whisper]'"
            ) from exc
        if not spec.model_path or not Path(spec.model_path).is_dir():
            raise RuntimeError(
                "faster-whisper needs SttSpec.model_path = a local CTranslate2 model directory, "
                f"got {spec.model_path!r}"
            )
        self.model = WhisperModel(spec.model_path, device="cpu", compute_type="int8")
        # A domain prompt nudges the decoder towards the scenario vocabulary.
        self.prompt = " ".join((corpus or [])[:20])[:800] if spec.lm == "domain" else None

    def recognize(self, pcm16k: np.ndarray, expect: Expectation) -> str:
        audio = pcm16k.astype(np.float32) / 32768.0
        segments, _info = self.model.transcribe(
            audio, language="en", beam_size=5, initial_prompt=self.prompt
        )
        return " ".join(s.text.strip() for s in segments).strip()


@STT_ENGINES.register("faster-whisper")
def faster_whisper_engine(spec: SttSpec, corpus: list[str] | None, cache_dir: Path):
    return FasterWhisperBackend(spec, corpus, cache_dir)
