"""API keys from the environment never reach stored tables, logs or reports.

One small text-mode ``evaflow run`` with dummy keys in the environment, LLM agents and
the LLM judge referencing a key by env var name, against a local fake endpoint. One
agent's endpoint answers normally; the other agent's and the judge's answer 401 with the
caller's key echoed in the body, as some proxies do. Afterwards every artifact is scanned: every file of the store (raw bytes, and every decoded Parquet cell),
the HTML report, the Prefect home (database and logs), and the command's stdout/stderr.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.reliability.cli import CliRunner, write_config

KEY_VAR = "EVAFLOW_TEST_LLM_KEY"


class FakeChatServer:
    """OpenAI-compatible endpoint on loopback: ``/ok/v1`` answers, ``/echo/v1`` leaks."""

    def __init__(self) -> None:
        self.authorizations: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                auth = self.headers.get("Authorization", "")
                server.authorizations.append(auth)
                if self.path.startswith("/echo/"):
                    body = {"error": {"message": f"Incorrect API key provided: {auth[7:]}"}}
                    self._send(401, body)
                    return
                message = {"role": "assistant", "content": "Sure, I can help with that."}
                usage = {"prompt_tokens": 10, "completion_tokens": 7}
                self._send(200, {"choices": [{"message": message}], "usage": usage})

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FakeChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def fake_llm() -> Iterator[FakeChatServer]:
    with FakeChatServer() as server:
        yield server


def _endpoint(url: str) -> dict[str, Any]:
    return {"base_url": url, "api_key_env": KEY_VAR, "max_retries": 0, "timeout_s": 10}


def _cell_hits(value: Any, needles: list[str]) -> bool:
    if isinstance(value, bytes):
        return any(n.encode() in value for n in needles)
    if isinstance(value, dict | list):
        return _cell_hits(json.dumps(value, default=str), needles)
    return isinstance(value, str) and any(n in value for n in needles)


def find_leaks(roots: list[Path], texts: dict[str, str], needles: list[str]) -> list[str]:
    """Every place a needle occurs: raw file bytes, decoded Parquet cells, given texts."""
    leaks = [f"{name} (text)" for name, text in texts.items() if _cell_hits(text, needles)]
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            if _cell_hits(path.read_bytes(), needles):
                leaks.append(f"{path} (bytes)")
            if path.suffix == ".parquet":
                table = pq.read_table(path)
                for column in table.column_names:
                    if not pa.types.is_integer(table.schema.field(column).type) and any(
                        _cell_hits(v, needles) for v in table.column(column).to_pylist()
                    ):
                        leaks.append(f"{path} column {column}")
    return leaks


def test_no_api_key_in_any_artifact_of_a_run(
    cli: CliRunner, cli_env: dict[str, str], eva_root: Path, tmp_path: Path, fake_llm: Any
) -> None:
    keys = {name: f"sk-test-{secrets.token_hex(16)}" for name in (KEY_VAR, "OPENAI_API_KEY")}
    store = tmp_path / "store"
    config = write_config(
        tmp_path / "run.yaml",
        run_id="secrets",
        store=str(store),
        scenarios={"eva_root": str(eva_root), "domains": ["airline"], "limit": 2},
        mode="text",
        conditions=["clean"],
        trials=1,
        max_attempts=1,
        systems=[
            {"name": "llm-ok", "agent": "llm", "params": _endpoint(f"{fake_llm.url}/ok/v1")},
            {"name": "llm-echo", "agent": "llm", "params": _endpoint(f"{fake_llm.url}/echo/v1")},
        ],
        judge={"name": "llm", "params": _endpoint(f"{fake_llm.url}/echo/v1")},
        report=True,
        runner={"kind": "threads"},
    )
    result = cli.run(["run", "--config", str(config), "--verbose"], extra_env=keys)
    assert result.returncode == 0, result.stderr[-3000:]
    # The keys really were in play: every request carried the judge/agent key.
    assert f"Bearer {keys[KEY_VAR]}" in fake_llm.authorizations
    assert any(p.name.endswith(".html") for p in store.rglob("*")), "no report was written"
    # Whole keys and their random parts (a key masked only at its ends still leaks).
    needles = [*keys.values(), *(k[len("sk-test-") :][4:-4] for k in keys.values())]
    leaks = find_leaks(
        [store, Path(cli_env["PREFECT_HOME"])],
        {"stdout": result.stdout, "stderr": result.stderr},
        needles,
    )
    assert not leaks, "API key found in:\n" + "\n".join(leaks)
