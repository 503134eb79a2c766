"""Awaitable writes and the read executor: results, coded errors, threads, a free loop, on
both engines (SQLite and PostgreSQL: the ``archive`` fixture runs each test on each)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from app.core.archive import Archive, open_archive
from app.core.archive.database import READ_THREADS
from app.core.archive.engine import Connection
from app.core.errors import ArchiveError

RELEASE_WAIT = 10.0
"""How long a blocked write waits to be released (a bound, so a broken loop cannot hang)."""


def make_table(archive: Archive) -> None:
    archive.db.write(lambda c: c.execute("CREATE TABLE t (v TEXT)"))


def values(archive: Archive) -> list[str]:
    with archive.db.reading() as conn:
        return [str(r[0]) for r in conn.execute("SELECT v FROM t ORDER BY v")]


def engine_error(archive: Archive) -> str:
    """The code of a statement's failure on the archive's engine."""
    return {"sqlite": "archive.sqlite", "postgresql": "archive.pg_error"}[archive.db.dialect]


async def test_awrite_commits_and_returns_what_the_function_returns(archive: Archive) -> None:
    make_table(archive)

    def insert(conn: Connection) -> tuple[str, str]:
        row = conn.execute("INSERT INTO t VALUES ('a') RETURNING v").fetchone()
        return str(row[0]), threading.current_thread().name

    written, thread = await archive.db.awrite(insert)
    assert written == "a"
    assert thread.startswith("arxiu-writer")
    assert thread != threading.current_thread().name
    assert values(archive) == ["a"]


async def test_aread_runs_on_a_named_read_thread_with_its_own_connection(
    archive: Archive,
) -> None:
    make_table(archive)
    archive.db.write(lambda c: c.execute("INSERT INTO t VALUES ('x')"))
    with archive.db.reading() as conn:
        mine = getattr(conn, "raw", conn)  # the engine's own connection (PostgreSQL: wrapped)

        def look(conn: Connection) -> tuple[str, bool, list[str]]:
            rows = [str(r[0]) for r in conn.execute("SELECT v FROM t")]
            return threading.current_thread().name, getattr(conn, "raw", conn) is mine, rows

        name, same, rows = await archive.db.aread(look)
    assert name.startswith("arxiu-read-")
    assert not same
    assert rows == ["x"]


async def test_two_reads_run_at_the_same_time(archive: Archive) -> None:
    """A long read (a search) does not queue a tool's read behind it."""
    both = threading.Barrier(2, timeout=RELEASE_WAIT)

    def meet(_conn: Connection) -> str:
        both.wait()  # BrokenBarrierError if the reads ran one after the other
        return threading.current_thread().name

    names = await asyncio.gather(archive.db.aread(meet), archive.db.aread(meet))
    assert len(set(names)) == 2
    assert all(n.startswith("arxiu-read-") for n in names)


async def test_a_read_inside_a_read_runs_at_once_on_its_thread(archive: Archive) -> None:
    """More nested reads than read threads finish: an inner read never queues for a thread
    its outer read holds (an apply's op runs a tool that reads, on a read thread)."""

    def inner(_conn: Connection) -> str:
        return threading.current_thread().name

    def outer(_conn: Connection) -> tuple[str, str]:
        both.wait()  # every read thread is now held by an outer read
        nested = asyncio.wait_for(archive.db.aread(inner), RELEASE_WAIT)  # not a hang if broken
        return threading.current_thread().name, asyncio.run(nested)

    both = threading.Barrier(READ_THREADS, timeout=RELEASE_WAIT)
    pairs = await asyncio.gather(*(archive.db.aread(outer) for _ in range(READ_THREADS)))
    assert all(outer_name == inner_name for outer_name, inner_name in pairs), pairs


async def test_awrite_sqlite_error_is_coded_and_rolls_back(archive: Archive) -> None:
    make_table(archive)

    def half_then_fail(conn: Connection) -> None:
        conn.execute("INSERT INTO t VALUES ('lost')")
        conn.execute("INSERT INTO no_such_table VALUES (1)")

    with pytest.raises(ArchiveError) as caught:
        await archive.db.awrite(half_then_fail)
    assert caught.value.code == engine_error(archive)
    assert "no_such_table" in caught.value.message
    assert values(archive) == []
    await archive.db.awrite(lambda c: c.execute("INSERT INTO t VALUES ('next')"))
    assert values(archive) == ["next"]  # the writer is usable after a failed transaction


async def test_awrite_other_error_reaches_the_caller_unchanged(archive: Archive) -> None:
    make_table(archive)

    def insert_then_raise(conn: Connection) -> None:
        conn.execute("INSERT INTO t VALUES ('lost')")
        raise ValueError("refused by the caller's check")

    with pytest.raises(ValueError, match="refused by the caller's check"):
        await archive.db.awrite(insert_then_raise)
    assert values(archive) == []


async def test_aread_sqlite_error_is_coded(archive: Archive) -> None:
    with pytest.raises(ArchiveError) as caught:
        await archive.db.aread(lambda c: c.execute("SELECT * FROM no_such_table").fetchall())
    assert caught.value.code == engine_error(archive)


async def test_awrite_on_a_read_only_archive_is_refused(archive: Archive) -> None:
    archive.close()
    with open_archive(archive.location, read_only=True) as ro:
        with pytest.raises(ArchiveError) as caught:
            await ro.db.awrite(lambda c: c.execute("CREATE TABLE t (v TEXT)"))
        assert caught.value.code == "archive.read_only"
        assert caught.value.hint


async def test_the_loop_runs_while_a_slow_write_runs(archive: Archive) -> None:
    """The write blocks until a loop callback releases it: that can only happen if awaiting
    the write leaves the loop free (a blocking write would wait out RELEASE_WAIT first)."""
    make_table(archive)
    order: list[str] = []
    started, release = threading.Event(), threading.Event()

    def slow(conn: Connection) -> None:
        order.append("write started")
        started.set()
        released = release.wait(RELEASE_WAIT)
        conn.execute("INSERT INTO t VALUES (?)", ("released" if released else "timed out",))
        order.append("write done")

    async def meanwhile() -> None:
        while not started.is_set():
            await asyncio.sleep(0.001)
        order.append("loop ran")
        release.set()

    helper = asyncio.ensure_future(meanwhile())
    await archive.db.awrite(slow)
    await helper
    assert order == ["write started", "loop ran", "write done"]
    assert values(archive) == ["released"]


async def test_the_loop_runs_while_a_slow_read_runs(archive: Archive) -> None:
    order: list[str] = []
    started, release = threading.Event(), threading.Event()

    def slow(_conn: Connection) -> bool:
        order.append("read started")
        started.set()
        released = release.wait(RELEASE_WAIT)
        order.append("read done")
        return released

    async def meanwhile() -> None:
        while not started.is_set():
            await asyncio.sleep(0.001)
        order.append("loop ran")
        release.set()

    helper = asyncio.ensure_future(meanwhile())
    assert await archive.db.aread(slow) is True
    await helper
    assert order == ["read started", "loop ran", "read done"]


async def test_a_cancelled_awrite_still_commits(archive: Archive) -> None:
    """Nothing is lost when the awaiting task goes (a run stopped while saving its turn)."""
    make_table(archive)
    started, release = threading.Event(), threading.Event()

    def slow(conn: Connection) -> None:
        started.set()
        release.wait(RELEASE_WAIT)
        conn.execute("INSERT INTO t VALUES ('kept')")

    task = asyncio.ensure_future(archive.db.awrite(slow))
    while not started.is_set():
        await asyncio.sleep(0.001)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    release.set()
    await archive.db.awrite(lambda c: None)  # the writer is in order: this runs after `slow`
    assert values(archive) == ["kept"]


@pytest.mark.allow_log("app.core.archive.database", "caller was cancelled failed")
async def test_a_cancelled_awrite_that_fails_is_logged(
    archive: Archive, caplog: pytest.LogCaptureFixture
) -> None:
    started, release = threading.Event(), threading.Event()

    def slow_failure(conn: Connection) -> None:
        started.set()
        release.wait(RELEASE_WAIT)
        conn.execute("INSERT INTO no_such_table VALUES (1)")

    task = asyncio.ensure_future(archive.db.awrite(slow_failure))
    while not started.is_set():
        await asyncio.sleep(0.001)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    release.set()
    await archive.db.awrite(lambda c: None)
    failed = [r for r in caplog.records if "caller was cancelled failed" in r.getMessage()]
    assert len(failed) == 1
    assert failed[0].exc_info is not None
    assert isinstance(failed[0].exc_info[1], ArchiveError)


async def test_close_stops_the_read_threads_and_refuses_new_reads(archive: Archive) -> None:
    await archive.db.aread(lambda c: c.execute("SELECT 1").fetchone())
    assert any(t.name.startswith("arxiu-read-") for t in threading.enumerate())
    archive.close()
    assert not any(t.name.startswith("arxiu-read-") for t in threading.enumerate())
    with pytest.raises(ArchiveError) as caught:
        await archive.db.aread(lambda c: c.execute("SELECT 1").fetchone())
    assert caught.value.code == "archive.closed"


def test_the_cli_path_starts_no_read_thread(archive: Archive) -> None:
    """Sync writes and reads (CLI, importers) never start the read executor."""
    before = {t.name for t in threading.enumerate()}
    with archive:
        make_table(archive)
        archive.db.write(lambda c: c.execute("INSERT INTO t VALUES ('cli')"))
        assert values(archive) == ["cli"]
        started = {t.name for t in threading.enumerate()} - before
        assert not any(name.startswith("arxiu-read-") for name in started)
