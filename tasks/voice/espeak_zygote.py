"""A helper process that makes eSpeak NG synthesis byte-reproducible.

eSpeak keeps state between utterances in C ``static`` variables (pitch flutter phase,
roughness cycle, onset amplitudes) that no API resets, so the same text in the same voice
comes out slightly different depending on what was said before. This process loads the
library once and, for every request, forks a child that starts from that pristine state,
synthesises one utterance, writes it to stdout and exits. Requests are served one at a
time, so replies never interleave.

Protocol on stdin/stdout: :mod:`tasks.voice.espeak_frames` messages. Request payload: JSON
``{"text", "voice" (resolved name), "params": {param id: value}}``. Reply: ``int32 rate``
followed by PCM16 samples, or a negative rate and a UTF-8 error message.
"""

from __future__ import annotations

import json
import os
import struct
import sys
from pathlib import Path
from typing import IO


def _serve_one(engine, request: bytes, out: IO[bytes]) -> None:
    from tasks.voice.espeak_frames import write_message

    try:
        spec = json.loads(request)
        params = {int(k): int(v) for k, v in spec["params"].items()}
        pcm = engine.synth(spec["text"], spec["voice"], params)
        write_message(out, struct.pack(">i", engine.rate) + pcm.astype("<i2").tobytes())
    except Exception as exc:  # reported to the caller, which raises it
        write_message(out, struct.pack(">i", -1) + f"{type(exc).__name__}: {exc}".encode())


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tasks.voice.espeak import _Espeak
    from tasks.voice.espeak_frames import read_message

    engine = _Espeak()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while (request := read_message(stdin)) is not None:
        pid = os.fork()
        if pid == 0:
            _serve_one(engine, request, stdout)
            os._exit(0)
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
