"""Length-prefixed messages between eSpeak's client and its helper process.

A message is a 4-byte big-endian length and the payload. Both sides import this module,
so neither imports the other's (``espeak`` starts ``espeak_zygote``, which loads
``espeak``'s engine).
"""

from __future__ import annotations

import struct
from typing import IO


def read_message(stream: IO[bytes]) -> bytes | None:
    """The next payload, or None when the stream ended (mid-message included)."""
    header = stream.read(4)
    if len(header) < 4:
        return None
    (size,) = struct.unpack(">I", header)
    data = stream.read(size)
    if len(data) < size:
        return None
    return data


def write_message(stream: IO[bytes], payload: bytes) -> None:
    stream.write(struct.pack(">I", len(payload)) + payload)
    stream.flush()
