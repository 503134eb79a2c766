"""Import benchmark: the EAD sets and the Tate dataset into fresh archives, against bare floors.

One run prints, side by side:

* **EAD** (the three sets of ``../shared/data/ead``, 39 finding aids): a bare
  ``lxml.etree.iterparse`` over the same files (no entities, no network; it also counts the
  components, ``archdesc`` + ``c``/``c01…c12``, an independent record count), and the same
  parse plus an FTS5 table (the archive's tokenizer) of every component's own text, 500 rows a
  transaction; then ``run_import(archive, "ead", SET)`` for each set into a fresh archive
  (records only, against the bare parse) and ``import_dataset`` into another (records, chunks
  and FTS5 as the app imports, against the parse with FTS5, and against the bare parse); the
  records counted are the components (the summary's authority stubs are shown apart);
* **Tate** (both files; ``--quick``: the first 10,000 artworks): ``run_import`` (records only)
  and ``import_dataset`` (records + chunks + FTS5), each into a fresh archive, against two
  floors measured in the same run from the same gzip files, parsed: ``sqlite3``
  ``executemany`` into one bare table (500 rows per transaction, WAL, ``synchronous=NORMAL``,
  like the archive), and the same plus an FTS5 table (same tokenizer as the archive's) over
  each row's texts (its string values) in the same transactions. Records-only is set against
  the bare floor, records + chunks + FTS against the floor with FTS;
* (not with ``--quick``) the same rows through sqlite-utils' ``insert_all``, and the p50/p95
  latency of reading one record with its links against a bare ``SELECT`` by primary key.

Each row gives wall seconds, records/s, the CPU seconds of the process (every thread) and both
ratios to its floor (``floor time / our time``: 1.0 is as fast as the floor); the ratio by CPU
is what a machine shared with other work disturbs least. The line under each import with chunks
and FTS splits its CPU between the archive's writer thread and the others (Linux): with a core
free for each, the wall time can go down to about the larger of the two.

Run: ``python benchmarks/bench_import.py`` (``--quick``: a Tate cut, under a minute). To
compare two versions of the code in one machine state, copy this file into the other tree's
``benchmarks/`` and run both one after the other (it imports the ``app`` next to it).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from lxml import etree  # noqa: E402

from app.core.archive import Archive, RecordKey, open_archive  # noqa: E402
from app.core.archive.importers import run_import  # noqa: E402
from app.core.importing import import_dataset  # noqa: E402

DATA = REPO.parent / "shared" / "data"
EAD_SETS = ("anf", "caltech-aspace-oai", "uw-labor-archives")
FILES = ("artists.jsonl.gz", "artworks.jsonl.gz")
BATCH = 500
QUICK_ARTWORKS = 10_000
COMPONENTS = {"archdesc", "c"} | {f"c{n:02d}" for n in range(1, 13)}
FTS = 'fts5(text, tokenize="unicode61 remove_diacritics 2")'
AUTHORITIES = ("agent1", "place1", "subject1")
"""The sections of the authority stubs an EAD import creates (counted in its summary, not in
the records compared with the components)."""


@dataclass(frozen=True)
class Span:
    """Wall-clock and CPU seconds (the process's, every thread) of one step."""

    wall: float
    cpu: float

    def __add__(self, other: Span) -> Span:
        return Span(self.wall + other.wall, self.cpu + other.cpu)

    def scaled(self, factor: float) -> Span:
        """Both times times ``factor``."""
        return Span(self.wall * factor, self.cpu * factor)


class Clock:
    """Measures a :class:`Span` from its creation to :meth:`span`."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def span(self) -> Span:
        """The time since the clock was made."""
        return Span(time.perf_counter() - self.wall, time.process_time() - self.cpu)


@dataclass(frozen=True)
class Timed:
    """An import measured twice, each time into a fresh archive: records only
    (``run_import``), then records + chunks + FTS as the app imports (``import_dataset``)."""

    records: int
    record: Span
    total: Span
    detail: str
    writer_cpu: float | None = None
    """CPU seconds of the archive's writer thread during ``total`` (None off Linux)."""

    @property
    def chunk(self) -> Span:
        """What chunks and FTS add."""
        return Span(self.total.wall - self.record.wall, self.total.cpu - self.record.cpu)


def dataset(folder: Path, quick: bool, work: Path) -> Path:
    """The Tate folder to import (a cut of it, written under ``work``, with ``quick``)."""
    if not quick:
        return folder
    cut = work / "tate"
    cut.mkdir()
    (cut / FILES[0]).write_bytes((folder / FILES[0]).read_bytes())
    with gzip.open(folder / FILES[1], "rb") as src, gzip.open(cut / FILES[1], "wb") as dst:
        for _, line in zip(range(QUICK_ARTWORKS), src, strict=False):
            dst.write(line)
    return cut


# -- EAD -----------------------------------------------------------------------------------------


def ead_files(ead: Path) -> list[Path]:
    """Every finding aid of the three sets."""
    return sorted(p for name in EAD_SETS for p in (ead / name).rglob("*.xml"))


def bare_parse(files: list[Path]) -> tuple[Span, int]:
    """The time of a bare ``iterparse`` over ``files`` and the components it saw."""
    clock, count = Clock(), 0
    for file in files:
        for _, element in etree.iterparse(
            str(file), events=("end",), resolve_entities=False, no_network=True
        ):
            if isinstance(element.tag, str) and etree.QName(element).localname in COMPONENTS:
                count += 1
    return clock.span(), count


def timed_import(work: Path, name: str, kind: str, paths: list[Path]) -> tuple[Timed, Archive]:
    """``run_import`` of each path into a fresh archive (records only), then
    ``import_dataset`` of each into another (records, chunks and FTS, as the app imports);
    the second archive, open."""
    archive = open_archive(work / f"{name}-records", create=True)
    clock, records, links, stubs = Clock(), 0, 0, 0
    for path in paths:
        summary = run_import(archive, kind, path)
        made = sum(summary.sections[tipo] for tipo in AUTHORITIES)
        records += summary.records - made
        links += summary.links
        stubs += made
    record = clock.span()
    archive.close()
    archive = open_archive(work / f"{name}-archive", create=True)
    writer = writer_cpu()
    clock = Clock()
    for path in paths:
        summary = import_dataset(archive, kind, path)
    total = clock.span()
    written = writer_cpu()
    spent = None if writer is None or written is None else written - writer
    with archive.db.reading() as conn:
        chunks = conn.execute("SELECT count(*) FROM index_chunks").fetchone()[0]
        pending = conn.execute(
            "SELECT count(*) FROM records r LEFT JOIN index_records i USING "
            "(section_tipo, section_id) WHERE i.version IS NOT r.version"
        ).fetchone()[0]
    assert pending == 0, f"{pending} records left unchunked"
    detail = (
        f"{links:,} links, {stubs:,} authority stubs, {chunks:,} chunks, "
        f"{archive.count_records():,} rows in records"
    )
    return Timed(records, record, total, detail, spent), archive


def writer_cpu() -> float | None:
    """CPU seconds the archive writer thread (``arxiu-writer``, the one archive open) has used
    so far, from ``/proc`` (None where there is none)."""
    ids = [t.native_id for t in threading.enumerate() if t.name.startswith("arxiu-writer")]
    if len(ids) != 1:
        return None
    try:
        fields = Path(f"/proc/self/task/{ids[0]}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _split(timed: Timed) -> str:
    """How the CPU of the import with chunks and FTS fell between the writer thread and the
    rest (parsing and building the records, and the chunks cut before a batch is queued)."""
    if timed.writer_cpu is None:
        return ""
    other = timed.total.cpu - timed.writer_cpu
    return f"; writer thread {timed.writer_cpu:.2f} s CPU, other threads {other:.2f} s"


def bench_ead(args: argparse.Namespace, work: Path) -> None:
    """Bare iterparse against import_ead, records only and with chunks + FTS."""
    ead = args.data / "ead"
    files = ead_files(ead)
    if not files:
        print(f"EAD: skipped (no sets under {ead})")
        return
    parse_s, components = bare_parse(files)
    fts_s, texts = bare_parse_fts(files, work / "ead-fts.db")
    timed, archive = timed_import(work, "ead", "ead", [ead / name for name in EAD_SETS])
    archive.close()
    size = sum(f.stat().st_size for f in files) / 1e6
    print(
        f"EAD import ({len(files)} files, {size:.1f} MB): {timed.records:,} records "
        f"({components:,} components counted by iterparse, {texts:,} FTS rows), {timed.detail}"
    )
    _line("bare lxml iterparse", parse_s, timed.records, None)
    _line("import_ead (records)", timed.record, timed.records, parse_s)
    _line("bare iterparse + FTS5", fts_s, timed.records, None)
    _line("import_dataset (+chunks, FTS)", timed.total, timed.records, fts_s)
    _line("  same, against iterparse", timed.total, timed.records, parse_s)
    print(
        f"  (chunks + FTS add {timed.chunk.wall:.2f} s, {timed.chunk.cpu:.2f} s CPU{_split(timed)})"
    )


def bare_parse_fts(files: list[Path], db_path: Path) -> tuple[Span, int]:
    """The bare parse plus an FTS5 table (the archive's tokenizer) of every component's own
    text (its ``itertext``, its child components cleared once read), 500 rows a transaction,
    WAL, ``synchronous=NORMAL``; the seconds and the rows."""
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute(f"CREATE VIRTUAL TABLE raw_fts USING {FTS}")
    clock, count, batch = Clock(), 0, []
    for file in files:
        for _, element in etree.iterparse(
            str(file), events=("end",), resolve_entities=False, no_network=True
        ):
            if isinstance(element.tag, str) and etree.QName(element).localname in COMPONENTS:
                batch.append((" ".join("".join(element.itertext()).split()),))
                element.clear(keep_tail=True)
                if len(batch) == BATCH:
                    count += _insert_texts(conn, batch)
                    batch = []
    count += _insert_texts(conn, batch)
    span = clock.span()
    conn.close()
    return span, count


def _insert_texts(conn: sqlite3.Connection, batch: list[tuple[str]]) -> int:
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("INSERT INTO raw_fts(text) VALUES (?)", batch)
    conn.execute("COMMIT")
    return len(batch)


def _line(name: str, span: Span, records: int, floor: Span | None) -> None:
    """One row: wall seconds, records/s, CPU seconds, and the ratios of both to ``floor``."""
    ratio = "" if floor is None else f"  {floor.wall / span.wall:5.2f}x the floor"
    cpu_ratio = "" if floor is None else f" ({floor.cpu / span.cpu:4.2f}x by CPU)"
    print(
        f"  {name:<30}{span.wall:8.2f} s  {records / span.wall:10,.0f} records/s"
        f"  CPU {span.cpu:6.2f} s{ratio}{cpu_ratio}"
    )


# -- Tate and the sqlite3 floors -----------------------------------------------------------------


def rows(folder: Path) -> Iterator[tuple[str, str, str, str]]:
    """``(source, id, json, texts)`` for every line of both files."""
    for name in FILES:
        with gzip.open(folder / name, "rb") as handle:
            for line in handle:
                row = json.loads(line)
                texts = " ".join(_strings(row))
                yield name, str(row["id"]), json.dumps(row, ensure_ascii=False), texts


def _strings(value: Any) -> Iterator[str]:
    """The string values inside ``value`` (a row's texts)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def raw_import(folder: Path, db_path: Path, *, fts: bool) -> tuple[Span, int, sqlite3.Connection]:
    """The floor: the same rows into one bare table (and an FTS5 table of their texts with
    ``fts``) with executemany, 500 rows a transaction; seconds and count."""
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("CREATE TABLE raw (source TEXT, id TEXT, data TEXT, PRIMARY KEY (source, id))")
    if fts:
        conn.execute(f"CREATE VIRTUAL TABLE raw_fts USING {FTS}")
    clock, count, batch = Clock(), 0, []
    for row in rows(folder):
        batch.append(row)
        if len(batch) == BATCH:
            count += _insert(conn, batch, fts)
            batch = []
    count += _insert(conn, batch, fts)
    return clock.span(), count, conn


def _insert(conn: sqlite3.Connection, batch: list[tuple[str, str, str, str]], fts: bool) -> int:
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("INSERT INTO raw VALUES (?, ?, ?)", [row[:3] for row in batch])
    if fts:
        conn.executemany("INSERT INTO raw_fts(text) VALUES (?)", [(row[3],) for row in batch])
    conn.execute("COMMIT")
    return len(batch)


def utils_import(folder: Path, db_path: Path) -> tuple[float, int]:
    """The same rows, batches and pragmas through sqlite-utils' ``insert_all``."""
    import sqlite_utils

    db = sqlite_utils.Database(db_path, execute_plugins=False)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    table = db.table("raw")
    table.create({"source": str, "id": str, "data": str}, pk=("source", "id"))
    start, batch = time.perf_counter(), []
    for source, row_id, data, _ in rows(folder):
        batch.append({"source": source, "id": row_id, "data": data})
        if len(batch) == BATCH:
            table.insert_all(batch, batch_size=BATCH)
            batch = []
    table.insert_all(batch, batch_size=BATCH)
    seconds = time.perf_counter() - start
    count = table.count
    db.close()
    return seconds, count


def bench_tate(args: argparse.Namespace, work: Path) -> None:
    """Tate records only and with chunks + FTS, against the two sqlite3 floors."""
    tate = args.data / "tate"
    if not (tate / FILES[1]).exists():
        print(f"Tate: skipped (the dataset is not at {tate})")
        return
    folder = dataset(tate, args.quick, work)
    raw_s, raw_count, raw_conn = raw_import(folder, work / "raw.db", fts=False)
    fts_s, _, fts_conn = raw_import(folder, work / "raw-fts.db", fts=True)
    fts_conn.close()
    timed, archive = timed_import(work, "tate", "tate", [folder])
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    raw_s = raw_s.scaled(timed.records / raw_count)  # the same number of records on both sides
    fts_s = fts_s.scaled(timed.records / raw_count)
    print(
        f"Tate import ({'quick' if args.quick else 'full'}): {timed.records:,} records, "
        f"{timed.detail} (peak RSS {rss_mib:,.0f} MiB)"
    )
    _line("raw sqlite3 executemany", raw_s, timed.records, None)
    _line("arxiu (records)", timed.record, timed.records, raw_s)
    _line("raw executemany + FTS5", fts_s, timed.records, None)
    _line("arxiu + chunks + FTS", timed.total, timed.records, fts_s)
    print(
        f"  (chunks + FTS add {timed.chunk.wall:.2f} s, {timed.chunk.cpu:.2f} s CPU{_split(timed)})"
    )
    if not args.quick:
        _utils_and_reads(args, work, folder, archive, raw_conn, raw_s, timed.records)
    archive.close()
    raw_conn.close()


def _utils_and_reads(
    args: argparse.Namespace,
    work: Path,
    folder: Path,
    archive: Archive,
    raw_conn: sqlite3.Connection,
    raw_s: Span,
    records: int,
) -> None:
    utils_seconds, utils_count = utils_import(folder, work / "utils.db")
    utils_rate, raw_rate = utils_count / utils_seconds, records / raw_s.wall
    print(
        f"  sqlite-utils                  {utils_seconds:8.2f} s  {utils_rate:10,.0f} records/s"
        f"  ({utils_rate / raw_rate:.2f}x raw: insert_all, same batches)"
    )
    arxiu_p50, arxiu_p95 = percentiles(read_latency(archive, args.samples))
    raw_p50, raw_p95 = percentiles(raw_latency(raw_conn, args.samples))
    print(
        f"Read one record with its links at {archive.count_records():,} records "
        f"({args.samples} random records):"
    )
    print(
        f"  arxiu get_record+links_from+links_to  p50 {arxiu_p50:6.3f} ms  p95 {arxiu_p95:6.3f} ms"
    )
    print(f"  raw SELECT by primary key             p50 {raw_p50:6.3f} ms  p95 {raw_p95:6.3f} ms")


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p95 in milliseconds."""
    cuts = statistics.quantiles(samples, n=100)
    return statistics.median(samples) * 1000, cuts[94] * 1000


def read_latency(archive: Archive, samples: int, seed: int = 7) -> list[float]:
    """Seconds to read random records with their links, one sample per record."""
    with archive.db.reading() as conn:
        keys = [
            RecordKey(r[0], r[1])
            for r in conn.execute("SELECT section_tipo, section_id FROM records").fetchall()
        ]
    chosen = random.Random(seed).sample(keys, min(samples, len(keys)))
    out = []
    archive.get_record(chosen[0])  # warm the connection
    for key in chosen:
        start = time.perf_counter()
        archive.get_record(key)
        archive.links_from(key)
        archive.links_to(key)
        out.append(time.perf_counter() - start)
    return out


def raw_latency(conn: sqlite3.Connection, samples: int, seed: int = 7) -> list[float]:
    """Seconds of a bare primary-key SELECT (plus JSON parse) of random rows."""
    ids = conn.execute("SELECT source, id FROM raw").fetchall()
    chosen = random.Random(seed).sample(ids, min(samples, len(ids)))
    out = []
    for source, row_id in chosen:
        start = time.perf_counter()
        data = conn.execute(
            "SELECT data FROM raw WHERE source = ? AND id = ?", (source, row_id)
        ).fetchone()[0]
        json.loads(data)
        out.append(time.perf_counter() - start)
    return out


def main() -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="first 10,000 Tate artworks only")
    parser.add_argument("--samples", type=int, default=1000, help="records read for latency")
    parser.add_argument("--only", choices=("ead", "tate"), help="run one of the two parts")
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder")
    args = parser.parse_args()
    print(f"code: {REPO}")
    with tempfile.TemporaryDirectory(prefix="bench-import-") as work:
        if args.only in (None, "ead"):
            bench_ead(args, Path(work))
        if args.only in (None, "tate"):
            bench_tate(args, Path(work))
    return 0


if __name__ == "__main__":
    sys.exit(main())
