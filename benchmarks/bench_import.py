"""Import benchmark: the whole Tate dataset into a fresh archive, against plain sqlite3.

Prints:

* the import rate (records/s) of ``import_dataset(archive, "tate", ../shared/data/tate)``
  (records, then their chunks) into a fresh archive, and the rate of the raw floor measured
  in the same run: the same rows read from the same gzip files, parsed, and written with
  ``sqlite3`` ``executemany`` into one bare table (500 rows per transaction, WAL,
  ``synchronous=NORMAL``, like the archive);
* the rate of the same rows written through sqlite-utils' ``insert_all`` (same batches, same
  pragmas; measured after the raw floor, so on a warm file cache), against the raw floor;
* the p50/p95 latency of reading one record with its links (``get_record`` + ``links_from`` +
  ``links_to``) over random records at that size, against a bare ``SELECT`` by primary key.

Run: ``python benchmarks/bench_import.py`` (``--quick`` imports the first 10,000 artworks only).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.archive import Archive, RecordKey, open_archive  # noqa: E402
from app.core.importing import import_dataset  # noqa: E402

TATE = REPO.parent / "shared" / "data" / "tate"
FILES = ("artists.jsonl.gz", "artworks.jsonl.gz")
BATCH = 500
QUICK_ARTWORKS = 10_000


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


def rows(folder: Path) -> Iterator[tuple[str, str, str]]:
    """``(source, id, json)`` for every line of both files."""
    for name in FILES:
        with gzip.open(folder / name, "rb") as handle:
            for line in handle:
                row = json.loads(line)
                yield name, str(row["id"]), json.dumps(row, ensure_ascii=False)


def raw_import(folder: Path, db_path: Path) -> tuple[float, int, sqlite3.Connection]:
    """The floor: the same rows into one bare table with executemany; seconds and count."""
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("CREATE TABLE raw (source TEXT, id TEXT, data TEXT, PRIMARY KEY (source, id))")
    start, count, batch = time.perf_counter(), 0, []
    for row in rows(folder):
        batch.append(row)
        if len(batch) == BATCH:
            count += _insert(conn, batch)
            batch = []
    count += _insert(conn, batch)
    return time.perf_counter() - start, count, conn


def _insert(conn: sqlite3.Connection, batch: list[tuple[str, str, str]]) -> int:
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("INSERT INTO raw VALUES (?, ?, ?)", batch)
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
    for source, row_id, data in rows(folder):
        batch.append({"source": source, "id": row_id, "data": data})
        if len(batch) == BATCH:
            table.insert_all(batch, batch_size=BATCH)
            batch = []
    table.insert_all(batch, batch_size=BATCH)
    seconds = time.perf_counter() - start
    count = table.count
    db.close()
    return seconds, count


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
    parser.add_argument("--quick", action="store_true", help="first 10,000 artworks only")
    parser.add_argument("--samples", type=int, default=1000, help="records read for latency")
    args = parser.parse_args()
    if not (TATE / FILES[1]).exists():
        print(f"skipped: the Tate dataset is not at {TATE}")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-import-") as work:
        run(args, Path(work))
    return 0


def run(args: argparse.Namespace, work: Path) -> None:
    """Import, read back, print."""
    folder = dataset(TATE, args.quick, work)
    raw_seconds, raw_count, raw_conn = raw_import(folder, work / "raw.db")
    archive = open_archive(work / "archive", create=True)
    summary = import_dataset(archive, "tate", folder)
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    arxiu_rate = summary.records / summary.seconds
    raw_rate = raw_count / raw_seconds
    print(
        f"Tate import ({'quick' if args.quick else 'full'}): {summary.records:,} records "
        f"({dict(summary.sections)}), {summary.links:,} links, "
        f"{len(summary.skipped)} skipped, {summary.unresolved} unresolved"
    )
    print(f"  arxiu import       {summary.seconds:8.2f} s  {arxiu_rate:10,.0f} records/s")
    print(f"  raw sqlite3        {raw_seconds:8.2f} s  {raw_rate:10,.0f} records/s")
    print(f"  ratio arxiu/raw    {arxiu_rate / raw_rate:8.2f}x   (peak RSS {rss_mib:,.0f} MiB)")
    utils_seconds, utils_count = utils_import(folder, work / "utils.db")  # after the RSS
    utils_rate = utils_count / utils_seconds
    print(
        f"  sqlite-utils       {utils_seconds:8.2f} s  {utils_rate:10,.0f} records/s"
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
    archive.close()
    raw_conn.close()


if __name__ == "__main__":
    sys.exit(main())
