"""A unit found by the titles above it: known-item queries on the EAD sets, with and without trails.

The three EAD sets of ``../shared/data/ead`` (39 finding aids) are imported twice into fresh
archives in one run: as the app imports them (each unit's metadata chunk led by its trail, the
titles of the fonds and series above it: :mod:`app.core.index.chunk_context`), and with the
trails turned off (``Trails.context`` answering ``None``), the chunks otherwise the same. The
queries are built from the records, not written by hand: a unit whose title at least
:data:`SHARED` units share ("Correspondence", "Ephemera", "Notes"), asked for as ``"<its title>
<its parent's title>"`` (the nearest record above it with another title), where that pair is
unique in the archive (the unit can be told apart); :data:`SAMPLE` of them drawn with a fixed
seed. Each query is a lexical search by record (``k=50``: no model is involved); the line gives
MRR@10, how many came first, and the import's CPU seconds of each archive.

``--dense`` indexes both archives with the app's default models (MiniLM and USE) and scores the
hybrid (the app's default) and dense searches too; ``--set`` keeps one set (``--dense --set
uw-labor-archives``: about 15,000 chunks per archive).

Run: ``python benchmarks/bench_trails.py [--sample N] [--seed S] [--set NAME] [--dense]``.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.archive import Archive, RecordKey, open_archive  # noqa: E402
from app.core.archive.hierarchy import hierarchy_of  # noqa: E402
from app.core.archive.records import locators  # noqa: E402
from app.core.importing import import_dataset  # noqa: E402
from app.core.index import HashingEmbedder, open_index  # noqa: E402
from app.core.index.chunk_context import Trails  # noqa: E402
from app.core.index.embedders import Embedder, default_embedders  # noqa: E402
from app.core.index.hits import SearchMode  # noqa: E402

EAD = REPO.parent / "shared" / "data" / "ead"
SETS = ("anf", "caltech-aspace-oai", "uw-labor-archives")
SHARED = 3
SAMPLE = 200


def imported(folder: Path, trails: bool, sets: tuple[str, ...]) -> tuple[Archive, float]:
    """The three sets imported into a fresh archive at ``folder`` (with trails or not), and
    the import's CPU seconds."""
    original = Trails.context
    if not trails:
        Trails.context = lambda self, key, values, restricted: None  # type: ignore[method-assign]
    try:
        archive = open_archive(folder, create=True)
        start = time.process_time()
        for name in sets:
            import_dataset(archive, "ead", EAD / name)
        return archive, time.process_time() - start
    finally:
        Trails.context = original  # type: ignore[method-assign]


def queries(archive: Archive, sample: int, seed: int) -> list[tuple[RecordKey, str]]:
    """``(unit, "<title> <parent's title>")`` for a sample of the units a shared title hides."""
    shape = hierarchy_of(archive, "ead1")
    assert shape is not None and shape.label_field
    titles: dict[RecordKey, str] = {}
    parents: dict[RecordKey, RecordKey | None] = {}
    for record in archive.iter_records("ead1"):
        titles[record.key] = " ".join((record.text(shape.label_field, "lg-eng") or "").split())
        above = [k for k in locators(record.items(shape.parent_field)) if k != record.key]
        parents[record.key] = above[0] if above else None
    shared = collections.Counter(t.casefold() for t in titles.values())
    found: list[tuple[RecordKey, str]] = []
    for key, title in titles.items():
        if not title or shared[title.casefold()] < SHARED:
            continue
        parent = parents[key]
        seen = {key}
        while parent is not None and parent not in seen and titles.get(parent, "") == title:
            seen.add(parent)
            parent = parents[parent]
        if parent is not None and titles.get(parent):
            found.append((key, f"{title} {titles[parent]}"))
    pairs = collections.Counter(q.casefold() for _, q in found)
    unique = [(k, q) for k, q in found if pairs[q.casefold()] == 1]
    return random.Random(seed).sample(unique, min(sample, len(unique)))


def score(
    archive: Archive, asked: list[tuple[RecordKey, str]], models: tuple[Embedder, ...] | None
) -> dict[SearchMode, tuple[float, int]]:
    """MRR@10 and first places of the search by record, per mode (lexical alone without
    ``models``; with them, the archive is indexed with them first)."""
    index = open_index(archive, models or HashingEmbedder())
    modes: tuple[SearchMode, ...] = ("lexical", "dense", "hybrid") if models else ("lexical",)
    out: dict[SearchMode, tuple[float, int]] = {}
    try:
        if models:
            index.index_now()
        for mode in modes:
            reciprocal, first = 0.0, 0
            for key, query in asked:
                hits = index.search(query, k=50, mode=mode, group_by_record=True)
                keys = [h.key for h in hits]
                rank = keys.index(key) + 1 if key in keys else None
                if rank is not None and rank <= 10:
                    reciprocal += 1 / rank
                first += rank == 1
            out[mode] = (reciprocal / max(len(asked), 1), first)
    finally:
        index.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sample", type=int, default=SAMPLE)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--set", choices=SETS, help="only this EAD set")
    parser.add_argument("--dense", action="store_true", help="index with the default models")
    args = parser.parse_args()
    if not (EAD / SETS[0]).exists():
        print(f"skipped: the EAD sets are not at {EAD}")
        return
    with tempfile.TemporaryDirectory() as work:
        sets = (args.set,) if args.set else SETS
        with_trails, cpu_with = imported(Path(work) / "trails", True, sets)
        without, cpu_without = imported(Path(work) / "bare", False, sets)
        asked = queries(with_trails, args.sample, args.seed)
        units = with_trails.count_records("ead1")
        print(
            f"EAD {', '.join(sets)}: {units:,} units; {len(asked)} queries '<title> <parent title>'"
        )
        for name, archive, cpu in (
            ("without trails", without, cpu_without),
            ("with trails", with_trails, cpu_with),
        ):
            start = time.perf_counter()
            scores = score(archive, asked, default_embedders() if args.dense else None)
            print(f"  {name:<15} import {cpu:.2f} s CPU", end="")
            for mode, (mrr, first) in scores.items():
                print(f"  {mode} MRR@10 {mrr:.3f} first {first:3d}/{len(asked)}", end="")
            print(f"  ({time.perf_counter() - start:.0f} s)")
            archive.close()
        for key, query in asked[:3]:
            print(f"  e.g. {key}: {query}")


if __name__ == "__main__":
    main()
