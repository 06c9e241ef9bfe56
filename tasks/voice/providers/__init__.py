"""Caller voices from hosted TTS APIs, each one module registered in ``TTS_ENGINES``.

``openai`` (``/v1/audio/speech``), ``elevenlabs`` (``/v1/text-to-speech/{voice_id}``) and
``cartesia`` (``/tts/bytes``). Each reads its key from the environment (``OPENAI_API_KEY``,
``ELEVENLABS_API_KEY``, ``CARTESIA_API_KEY``), its base URL from ``OPENAI_BASE_URL``,
``ELEVENLABS_BASE_URL``, ``CARTESIA_BASE_URL`` (the providers' own hosts by default; tests
point them at local fakes) and asks for raw 16-bit PCM, so no decoder is needed.
``VoiceSpec.voice`` is ``"VOICE"`` or ``"MODEL:VOICE"``; an eSpeak voice name (the persona
default, ``en-us+klatt5``) means "the engine's default voice", higher or lower by pitch.

No engine sends its own HTTP: ``openai`` and ``elevenlabs`` go through LiteLLM's speech
endpoint (``_litellm``, retries by its Router), ``cartesia``, which LiteLLM does not speak,
through the official ``cartesia`` SDK (extra ``evaflow[cartesia]``).
``TTS_ENGINES`` imports this package's modules on its first lookup; LiteLLM and the SDK are
imported when a call builds its voice (``tasks.voice.tts.prepare_engine``) or at the first
request, so ``import evaflow`` stays light.
"""
