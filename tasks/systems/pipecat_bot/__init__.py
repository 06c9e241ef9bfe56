"""The Pipecat bot: a Pipecat pipeline per call, served as a Twilio Media Streams WebSocket.

Runs INSIDE its own virtual environment (``.venv-pipecat``, ``make pipecat-env``, pinned in
``requirements.txt``): ``python -m tasks.systems.pipecat_bot --port P --system-json FILE``.
Never imports evaflow's heavy dependencies (prefect, dask, audiomentations, duckdb); the
offline engines of :mod:`tasks.voice` run inside it as Pipecat services.

Modules: ``pipeline`` (one call's pipeline from the system's components), ``offline``
(PocketSphinx / eSpeak NG as Pipecat services), ``tools`` (the trial's tool bridge as the
LLM's functions), ``app`` (the FastAPI WebSocket server).
"""
