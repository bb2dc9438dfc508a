"""The service around the HTTP API: the checked-in OpenAPI document, where a server may listen, ``mnemonite serve``."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from mnemonite import InsecureServerError, Memory
from mnemonite.cli import app
from mnemonite.server import check_exposure, openapi_document
from mnemonite.server.http import is_loopback

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


def test_the_checked_in_openapi_document_is_current() -> None:
    checked_in = json.loads((ROOT / "docs" / "openapi.json").read_text())
    assert checked_in == json.loads(json.dumps(openapi_document())), "stale docs/openapi.json: run make openapi"


def test_the_openapi_document_describes_errors_and_auth() -> None:
    document = openapi_document()
    remember = document["paths"]["/v1/facts"]["post"]
    assert remember["operationId"] == "semantic.remember"
    assert {"400", "401", "403", "413", "422"} <= set(remember["responses"])
    assert "ProblemDetails" in document["components"]["schemas"]
    assert document["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("[::1]", True), ("localhost", True),
     ("0.0.0.0", False), ("::", False), ("192.168.1.4", False), ("example.com", False)],
)  # fmt: skip
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


async def test_no_key_no_listening_beyond_loopback(mem_on_both: Memory) -> None:
    await check_exposure(mem_on_both, "127.0.0.1")
    with pytest.raises(InsecureServerError, match="keys create"):
        await check_exposure(mem_on_both, "0.0.0.0")
    issued = await mem_on_both.keys.create("alice")
    await check_exposure(mem_on_both, "0.0.0.0")
    await mem_on_both.keys.revoke(issued.key.id)
    with pytest.raises(InsecureServerError):
        await check_exposure(mem_on_both, "0.0.0.0")


def made(path: Path) -> str:
    """A memory at ``path`` with one episode in it (serve opens only an existing one)."""
    result = runner.invoke(app, ["record", "hello", "-u", "alice", "-s", "s1", "-a", "a", "--db", str(path)])
    assert result.exit_code == 0, result.output
    return str(path)


def test_cli_serve_refuses_the_network_without_a_key(tmp_path: Path) -> None:
    result = runner.invoke(app, ["serve", "--db", made(tmp_path / "m.db"), "--host", "0.0.0.0", "--port", "1"])
    assert result.exit_code == 1 and "refusing to listen on 0.0.0.0" in result.output


def test_cli_serve_refuses_a_missing_memory_and_creates_nothing(tmp_path: Path) -> None:
    result = runner.invoke(app, ["serve", "--db", str(tmp_path / "typo.db"), "--port", str(free_port())])
    assert result.exit_code == 1 and "no database at" in result.stderr and "keys create" in result.stderr
    assert "serving" not in result.output and list(tmp_path.iterdir()) == []


def test_cli_serve_on_a_port_in_use_says_so_before_any_banner(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = runner.invoke(app, ["serve", "--db", made(tmp_path / "m.db"), "--port", str(port)])
    assert result.exit_code == 1 and result.stderr.startswith("error: cannot listen on 127.0.0.1:")
    assert "another process" in result.stderr and "serving" not in result.output


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_cli_serve_serves_until_stopped(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [
        sys.executable,
        "-c",
        "from mnemonite.cli import main; main()",
        "serve",
        "--db",
        made(tmp_path / "m.db"),
        "--port",
        str(port),
    ]
    process = subprocess.Popen([*command, "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        answer = None
        for _ in range(300):
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        assert answer is not None and answer.json()["status"] == "ok"
        assert httpx.get(f"http://127.0.0.1:{port}/v1/facts").status_code == 401
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=30)
    assert json.loads(out)["url"] == f"http://127.0.0.1:{port}"


@pytest.mark.parametrize("command", [["serve"], ["mcp", "--user", "alice"]])
def test_without_the_server_extras_the_commands_say_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    for name in [name for name in sys.modules if name.startswith(("mnemonite.server", "fastapi", "mcp"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "fastapi", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "mcp", None)
    result = runner.invoke(app, [*command, "--db", str(tmp_path / "m.db")])
    assert result.exit_code == 1 and "pip install 'mnemonite[server,mcp]'" in result.output
    assert not (tmp_path / "m.db").exists()
