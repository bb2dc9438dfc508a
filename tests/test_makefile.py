"""`make demo` installs the runtime only, `make test` adds the dev tools, and neither undoes the other.

Run as `make -n` (print, do not run) against a virtual environment of a temporary folder.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def plan(target: str, venv: Path) -> str:
    done = subprocess.run(
        ["make", "-n", "-C", str(ROOT), target, f"VENV={venv}"], capture_output=True, text=True, check=True
    )
    return done.stdout


def installs(commands: str) -> list[str]:
    return [line for line in commands.splitlines() if "pip install" in line and "--upgrade pip" not in line]


def fake_venv(tmp_path: Path, *stamps: str) -> Path:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()
    for stamp in stamps:
        (venv / stamp).touch()
    return venv


def test_demo_on_a_fresh_clone_installs_the_runtime_and_says_so(tmp_path: Path) -> None:
    commands = plan("demo", tmp_path / "venv")
    assert "-m venv" in commands
    [install] = [line.split("pip install", 1)[1].strip() for line in installs(commands)]
    assert install == '--progress-bar on -e ".[parser]"'  # the runtime and the statement parser
    assert "installing mnemonite and its runtime dependencies" in commands
    assert "mnemonite demo" in commands


def test_test_on_a_fresh_clone_installs_the_dev_tools(tmp_path: Path) -> None:
    [install] = installs(plan("test", tmp_path / "venv"))
    assert '".[dev]"' in install


def test_test_installs_chromium_for_the_browser_tests_only_when_it_is_missing(tmp_path: Path) -> None:
    commands = plan("test", tmp_path / "venv")
    assert "command -v chromium" in commands and "apt-get install -y -qq chromium" in commands


def test_test_after_demo_adds_the_dev_tools(tmp_path: Path) -> None:
    venv = fake_venv(tmp_path, ".installed-runtime")
    [install] = installs(plan("test", venv))
    assert '".[dev]"' in install


def test_demo_after_test_installs_nothing(tmp_path: Path) -> None:
    venv = fake_venv(tmp_path, ".installed-dev", ".installed-runtime")
    assert installs(plan("demo", venv)) == []
    assert installs(plan("lint", venv)) == []
