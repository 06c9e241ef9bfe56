from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.tasks.judges.fakes import FakeChatServer, running_server


@pytest.fixture
def chat_server() -> Iterator[FakeChatServer]:
    with running_server() as server:
        yield server
