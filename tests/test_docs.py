"""The documentation site builds with ``mkdocs build --strict`` (as CI builds it): every page, link and
generated reference resolves."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_site_builds_strictly_with_both_references(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "NO_MKDOCS_2_WARNING": "1"}
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    cli = (site / "cli" / "index.html").read_text()
    assert "mnemonite keys create" in cli and "mnemonite serve" in cli  # generated from the commands
    api = (site / "api" / "index.html").read_text()
    assert "remember_with_decision" in api and "MnemoniteStore" in api  # generated from the code
    assert (site / "openapi.json").is_file()


def test_every_error_a_client_can_receive_has_its_anchor_in_the_errors_page() -> None:
    """A problem's ``type`` links to ``errors/#<class>``: every error class has that anchor."""
    import inspect

    import mnemonite.errors as errors
    from mnemonite.server.problems import status_of

    page = (ROOT / "docs" / "errors.md").read_text()
    missing = [
        name
        for name, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, errors.MnemoniteError) and status_of(cls("x")) and f'id="{name.lower()}"' not in page
    ]
    assert missing == []
