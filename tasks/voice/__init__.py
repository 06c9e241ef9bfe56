"""Offline speech engines and the telephone channel.

* ``tts``: ``synthesize(text, VoiceSpec, engine)`` -> ``Clip`` (registry ``TTS_ENGINES``);
* ``stt``: ``SttSpec``, ``Recognizer(spec, corpus_sentences, cache_dir).recognize(clip)``
  (registry ``STT_ENGINES``), ``build_domain_lm``;
* ``corpus``: ``domain_corpus`` (template sentences for the domain language model);
* ``telephony``: G.711 mu-law, ``resample``, ``to_wire``/``from_wire``, ``frames``;
* ``vad``: ``EnergyVAD`` (streaming), ``speech_segments``.
"""

# Registers the TTS-made "babble" noise source with perturbations.noise.
import tasks.voice.babble  # noqa: E402, F401
