"""What the store asks of an archive's storage engine, whichever it is: the :class:`Engine`, the
:class:`Connection` its statements run on, the :class:`Cursor` and :class:`Row` they read.

A folder's engine is :class:`app.core.archive.database.Database` (SQLite); a shared archive's
is :class:`app.core.archive.postgres.database.PgDatabase` (PostgreSQL). This module imports
nothing of the archive, so every part of it can name these types.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


Params = Sequence[Any] | Mapping[str, Any]
"""A statement's parameters: positional (``?``) or named (``:name``)."""


class Row(Protocol):
    """A row read by column name or index, whose ``keys()`` are its column names."""

    def __getitem__(self, key: int | str, /) -> Any: ...

    def keys(self) -> list[str]: ...


class Cursor(Protocol):
    """What the store reads from a statement on either engine (``sqlite3.Cursor`` is one).

    Rows are read by column name and by index (``sqlite3.Row``, or the PostgreSQL engine's
    row), and ``dict(row)`` gives the column names."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """The engine-neutral connection the store's SQL runs on: ``sqlite3.Connection`` is one,
    and so is :class:`app.core.archive.postgres.database.PgConnection`. SQL written for it
    uses ``?`` or ``:name`` placeholders and the forms both engines share (see that module)."""

    def execute(self, sql: str, parameters: Params = ..., /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Params], /) -> Cursor: ...


class Engine(Protocol):
    """An archive's storage engine: :class:`Database` (SQLite) or
    :class:`app.core.archive.postgres.database.PgDatabase` (PostgreSQL).

    ``reading()`` lends a connection for reads; ``write(fn)`` runs ``fn`` in one transaction
    on the engine's single writer thread (committed in submission order, rolled back on any
    error); ``aread``/``awrite`` are the same as awaitables. Engine errors reach the caller as
    coded :class:`~app.core.errors.ArchiveError` values."""

    read_only: bool
    role: str | None
    """The server role a shared archive's connections log in as; ``None`` for SQLite."""
    dialect: str
    """``"sqlite"`` or ``"postgresql"``: for the few statements the engines write differently
    (JSON functions, accent folding)."""

    def reading(self) -> AbstractContextManager[Connection]: ...

    def trace(self, listener: Callable[[str], None] | None) -> None:
        """Call ``listener(statement)`` on the thread that runs each statement (``None``:
        stop)."""

    def submit(self, fn: Callable[[Connection], T]) -> Future[T]: ...

    def keep_file(self, conn: Connection, path: str, source: Path) -> None:
        """Keep media file ``source`` as ``path`` in the engine, in ``conn``'s transaction
        (SQLite: nothing, the file is in the archive folder; PostgreSQL: its bytes)."""

    def fetch_file(self, path: str, target: Path) -> bool:
        """Write media file ``path`` kept by the engine to ``target``; ``False`` when the
        engine keeps no files or has not this one."""

    def write(self, fn: Callable[[Connection], T]) -> T: ...

    async def aread(self, fn: Callable[[Connection], T]) -> T: ...

    async def awrite(self, fn: Callable[[Connection], T]) -> T: ...

    def close(self) -> None: ...
