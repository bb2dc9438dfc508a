"""Every fenced block of docs/ runs in the test suite, so a page cannot show a command, an option, an API or a
configuration that does not work.

- ```python: each block is a program of its own (blocks never build on each other), run as a subprocess in an
  empty folder; a ``print(...)`` line ending in ``# text`` must print that text.
- ```bash: a page's blocks are one shell session, in order, in an empty folder: ``mnemonite`` commands run (in
  process), ``serve`` and ``ui`` start in the background until the page ends (then Ctrl-C), ``mnemonite mcp`` is
  launched with the MCP SDK's client, ``curl`` is sent with httpx and must not answer an error, and ``export``
  sets a variable. A ``[...]`` option is run included. `NOT_RUN` lists what is checked without running it.
- ```json: an MCP host's configuration is launched as the host would (its ``command``, or its ``url`` on a server
  started here); a problem-details body must be what the server answers to a GET of its ``instance``.
- ```text: ``message`` then ``→ kept`` is what secret recognition makes of the message.

What belongs to the reader's machine is replaced by the test's own: a path under ``/home/NAME/`` by the session's
folder, a ``postgresql://`` URL by a fresh database, a documented port by a free one, the ``mnm_...`` of a config
by a real key; the secret a ``keys create`` prints is ``$KEY``, as the reader would paste it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import httpx
import httpx2
import pytest
import typer
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from live_server import running
from mcp_host import HOST_PATH, exercise, remember_and_search, with_database
from mnemonite import Episode, MemoryConfig, SyncMemory
from mnemonite.cli import app
from mnemonite.server import create_app

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>\S*)\n(?P<code>.*?)^(?P=indent)```$", re.MULTILINE | re.DOTALL)
# Commands a test cannot run, each with what is checked instead.
NOT_RUN = {"pip install": "it installs packages: each extra it names must exist in pyproject.toml"}
EXTRAS = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    lang: str
    code: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def find_blocks() -> list[Block]:
    found = []
    for path in sorted(DOCS.rglob("*.md")):
        text = path.read_text()
        for match in FENCE.finditer(text):
            code = "\n".join(line.removeprefix(match["indent"]) for line in match["code"].splitlines())
            line = text.count("\n", 0, match.start()) + 1
            found.append(Block(str(path.relative_to(DOCS)), line, match["lang"], code))
    return found


BLOCKS = find_blocks()
SHELL_PAGES = sorted({block.page for block in BLOCKS if block.lang == "bash"})


def of(lang: str) -> list[Block]:
    return [block for block in BLOCKS if block.lang == lang]


def test_every_block_is_run_by_a_test_of_its_language() -> None:
    run = {"python", "bash", "json", "text"}
    assert run <= {block.lang for block in BLOCKS}, "the fence pattern no longer finds the pages' blocks"
    unknown = [f"{block} ```{block.lang}" for block in BLOCKS if block.lang not in run]
    assert unknown == [], "a block no test runs: give it a language these tests run, or teach them a new one"


# ```bash


def command_lines(code: str) -> Iterator[list[str]]:
    """The block's commands as words: continued lines joined, comments dropped, ``[optional]`` brackets removed."""
    for line in code.replace("\\\n", " ").splitlines():
        words, optional = [], False
        for word in shlex.split(line, comments=True):
            if word.startswith("["):
                word, optional = word[1:], True
            if optional and word.endswith("]"):
                word, optional = word[:-1], False
            words += [word] if word else []
        if words:
            yield words


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def subcommand(args: list[str]) -> str:
    """The command after the global options (``--db X``, flags)."""
    words = iter(args)
    for word in words:
        if word == "--db":
            next(words)
        elif not word.startswith("-"):
            return word
    raise AssertionError(f"no command in `mnemonite {' '.join(args)}`")


def default_port(command: str) -> str:
    click = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    return str(next(param.default for param in click.params if param.name == "port"))


class Shell:
    """One page's shell blocks, run in order in one folder; servers it starts are stopped when it closes."""

    def __init__(self, folder: Path, logs: Path, postgres: str | None) -> None:
        self.folder, self.logs, self.postgres = folder, logs, postgres
        self.exported: dict[str, str] = {}
        self.variables: dict[str, str] = {}
        self.ports: dict[str, int] = {}  # a documented port -> where the test's server listens
        self.servers: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> Shell:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: BaseException | TracebackType | None) -> None:
        running = [server for server in self.servers if server.poll() is None]
        for server in running:
            server.send_signal(signal.SIGINT)
        try:
            stopped = [server.wait(timeout=30) for server in running]
        finally:
            for server in running:
                server.kill()
        assert kind is not None or all(code in (0, 130) for code in stopped), "a server did not stop on Ctrl-C"

    def run(self, words: list[str]) -> None:
        words = [self.expand(word) for word in words]
        if " ".join(words[:2]) in NOT_RUN:
            return self.pip_install(words[2:])
        runners = {"export": self.export, "mnemonite": self.mnemonite, "curl": self.curl}
        assert words[0] in runners, f"no way to run `{' '.join(words)}`: teach Shell, or add it to NOT_RUN"
        runners[words[0]](words)

    def expand(self, word: str) -> str:
        def variable(match: re.Match[str]) -> str:
            assert match[1] in self.variables, f"${match[1]} is used before anything set it"
            return self.variables[match[1]]

        word = re.sub(r"\$\{?(\w+)\}?", variable, word)
        word = re.sub(r"/home/[^/]+/", f"{self.folder}/", word)
        if word.startswith("postgresql://") or "=postgresql://" in word:
            assert self.postgres is not None
            word = re.sub(r"postgresql://\S+", self.postgres, word)
        return word

    def pip_install(self, words: list[str]) -> None:
        for word in (word for word in words if not word.startswith("-")):
            named = re.fullmatch(r"(?:mnemonite|\.)(?:\[([\w,-]+)\])?", word)
            assert named, f"`pip install {word}`: only mnemonite (or the clone, `.`) and its extras are expected"
            assert set((named[1] or "").split(",")) - {""} <= EXTRAS, f"`pip install {word}`: no such extra"

    def export(self, words: list[str]) -> None:
        name, _, value = words[1].partition("=")
        self.exported[name] = value

    def mnemonite(self, words: list[str]) -> None:
        command = subcommand(words[1:])
        if command in ("serve", "ui"):
            self.start(words[1:], command)
        elif command == "mcp":
            server = {"command": "mnemonite", "args": words[1:], "env": self.exported}
            with contextlib.chdir(self.folder):
                assert asyncio.run(remember_and_search(server))[0] == "I live in Porto"
        else:
            with contextlib.chdir(self.folder):
                done = CliRunner().invoke(app, words[1:], env={"MNEMONITE_URL": None, **self.exported})
            assert done.exit_code == 0, f"`{' '.join(words)}` failed:\n{done.output}"
            if secret := re.search(r"\bmnm_[\w-]+", done.output):
                self.variables["KEY"] = secret[0]

    def start(self, args: list[str], command: str) -> None:
        port = free_port()
        if "--port" in args:
            self.ports[args[args.index("--port") + 1]] = port
            args[args.index("--port") + 1] = str(port)
        else:
            self.ports[default_port(command)] = port
            args += ["--port", str(port)]
        log = self.logs / f"{command}-{port}.log"
        env = {name: value for name, value in os.environ.items() if name != "MNEMONITE_URL"}
        env |= self.exported | {"PATH": HOST_PATH, "PYTHONUNBUFFERED": "1"}
        with log.open("wb") as out:
            server = subprocess.Popen(["mnemonite", *args], cwd=self.folder, env=env, stdout=out, stderr=out)
        self.servers.append(server)
        wait_for_health(server, port, log)
        if command == "ui":
            open_inspector(log.read_text())

    def curl(self, words: list[str]) -> None:
        method, url, headers, data = curl_request(words[1:])
        parts = urlsplit(url if "://" in url else f"http://{url}")
        assert str(parts.port) in self.ports, f"`{' '.join(words)}` reaches no server the page started"
        local = parts._replace(netloc=f"127.0.0.1:{self.ports[str(parts.port)]}").geturl()
        answer = httpx.request(method, local, headers=headers, content=data, timeout=60)
        assert answer.status_code < 400, f"`{' '.join(words)}` answered {answer.status_code}: {answer.text}"
        body = answer.json()
        assert not (isinstance(body, dict) and body.get("ok") is False), f"`{' '.join(words)}` answered {body}"


def wait_for_health(server: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert server.poll() is None, f"{server.args} exited:\n{log.read_text()}"
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200:
                return
        time.sleep(0.1)
    raise AssertionError(f"{server.args} did not answer /health:\n{log.read_text()}")


def open_inspector(printed: str) -> None:
    """The inspector prints its address and a new key (the block's comment says so): the key opens the pages."""
    url, secret = re.search(r"http://\S+/ui/", printed), re.search(r"\bmnm_[\w-]+", printed)
    assert url and secret, printed
    page = httpx.get(url[0], headers={"Authorization": f"Bearer {secret[0]}"}, follow_redirects=True)
    assert page.status_code == 200 and page.url.path not in ("/ui/", "/ui/login"), page.text  # a view, not the login


def curl_request(args: list[str]) -> tuple[str, str, dict[str, str], str | None]:
    """Method, URL, headers and body of a curl command line (the options the docs use; any other fails)."""
    method, url, headers, data = None, None, {}, None
    words = iter(args)
    for word in words:
        if word == "-s":
            continue
        if word == "-X":
            method = next(words)
        elif word == "-H":
            name, _, value = next(words).partition(":")
            headers[name.strip()] = value.strip()
        elif word == "-d":
            data = next(words)
        else:
            assert not word.startswith("-") and url is None, f"curl {word}: an option these tests do not know"
            url = word
    assert url is not None, f"curl {' '.join(args)}: no URL"
    return method or ("POST" if data is not None else "GET"), url, headers, data


@pytest.mark.parametrize("page", SHELL_PAGES)
def test_a_pages_shell_blocks_run_in_order(page: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    blocks = [block for block in BLOCKS if block.page == page and block.lang == "bash"]
    needs_postgres = any("postgresql://" in block.code for block in blocks)
    postgres = request.getfixturevalue("postgres_url") if needs_postgres else None
    (tmp_path / "home").mkdir()
    with Shell(tmp_path / "home", tmp_path, postgres) as shell:
        for block in blocks:
            for words in command_lines(block.code):
                shell.run(words)


# ```json


def served_memory(folder: Path) -> tuple[str, str]:
    """A memory with one API key, for alice: its URL and the key's secret."""
    url = f"sqlite:///{folder / 'm.db'}"
    with SyncMemory.open(url, embedder=None) as mem:
        return url, mem.keys.create("alice").secret


async def over_http(base: str, server: dict[str, Any], secret: str) -> list[str]:
    headers = {name: value.replace("mnm_...", secret) for name, value in server.get("headers", {}).items()}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as client,
        streamable_http_client(base + urlsplit(server["url"]).path, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        return await exercise(session)


def host_entry_works(server: dict[str, Any], folder: Path) -> None:
    if "command" in server:
        found = asyncio.run(remember_and_search(with_database(server, folder / "m.db")))
    else:
        url, secret = served_memory(folder)
        with running(create_app(url)) as base:
            found = asyncio.run(over_http(base, server, secret))
    assert found[0] == "I live in Porto"


def problem_is_served(problem: dict[str, Any], folder: Path) -> None:
    url, secret = served_memory(folder)
    with running(create_app(url)) as base:
        answer = httpx.get(base + problem["instance"], headers={"Authorization": f"Bearer {secret}"})
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json() == problem


@pytest.mark.parametrize("block", of("json"), ids=str)
def test_a_json_block_is_what_mnemonite_takes_or_answers(block: Block, tmp_path: Path) -> None:
    shown = json.loads(block.code)
    if "mcpServers" in shown:
        for server in shown["mcpServers"].values():
            host_entry_works(server, tmp_path)
    else:
        assert {"type", "status", "instance"} <= shown.keys(), f"{block}: no way to check this JSON"
        problem_is_served(shown, tmp_path)


# ```text


@pytest.mark.parametrize("block", of("text"), ids=str)
def test_a_text_block_shows_what_recognition_keeps_of_a_message(block: Block) -> None:
    said, arrow, kept = block.code.strip().partition("\n→ ")
    assert arrow, f"{block}: a text block shows a message, then `→ ` and what memory keeps of it"
    with SyncMemory.open("sqlite:///:memory:", config=MemoryConfig(embedder="none")) as mem:
        assert mem.episodic.put(Episode(content=said), user="u", session="s", agent="a").content == kept


# ```python


@pytest.fixture(scope="module", autouse=True)
def python_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[Block, subprocess.Popen[str]]]:
    """Each python block, started in an empty folder of its own when the module starts: they run while the tests
    above do, and the tests below (the module's last) read what they printed."""
    path = os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PATH": HOST_PATH, "PYTHONPATH": path}
    pipes: dict[str, Any] = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True, "env": env}
    started = {
        block: subprocess.Popen([sys.executable, "-c", block.code], cwd=tmp_path_factory.mktemp("block"), **pipes)
        for block in of("python")
    }
    yield started
    for process in started.values():
        process.kill()
        process.communicate()


@pytest.mark.parametrize("block", of("python"), ids=str)
def test_a_python_block_runs_and_prints_what_it_says(
    block: Block, python_runs: dict[Block, subprocess.Popen[str]]
) -> None:
    out, err = python_runs[block].communicate(timeout=300)
    assert python_runs[block].returncode == 0, f"{block} failed:\n{block.code}\n{err}"
    for shown in re.findall(r"^\s*print\(.*\)  # (.+)$", block.code, flags=re.MULTILINE):
        assert shown in out, f"{block} says it prints {shown!r}; it printed:\n{out}"
