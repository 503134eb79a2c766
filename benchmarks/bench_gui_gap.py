"""GUI-thread stalls while a change plan is applied and while the search box searches Tate.

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_gui_gap.py [--runs 3] [--no-search]

A 5 ms ``QTimer`` ticks on the GUI thread (a qasync loop over a ``QApplication``, as in the
app); the longest interval between two ticks is the longest the window could not repaint or
answer a click. Figures are printed for:

a. **apply**: a 64-op change plan (32 ``dedalo_create_record`` + 32 ``dedalo_set_field`` on
   the records those made, through ``{"ref": ...}``) put in the plan book and resolved with
   ``session.plans.resolve(pending_id, True)`` (``session.resolve`` before the session was
   split) — the call the confirm card's Apply button makes — on a small fresh archive;
a2. **apply in the window**: the same apply in a shown ``MainWindow`` (a record open), timed
   until the window has read again and shown what it shows (its ``refreshed`` signal: the
   plan desk's announcement reaches the panel, the window re-reads the sections, the rows
   listed and the record open);
b. **search**: ``MainWindow.search(query)`` — what the search box runs — on the Tate archive
   (72,736 records imported from ``../shared/data/tate``, lexical chunks; built once into
   ``--tate-dir`` and reused), with the bundled MiniLM embedding the query (the Tate archive
   has no dense vectors: embedding 72k records takes far longer than this benchmark).

For reference the same apply is also timed without the ticking timer (the raw floor), so the
apply's own seconds can be compared with the measured run. Each line also counts the full
(generation 2) garbage collections during the measurement and the longest one: a full
collection holds the GIL, so it stalls the GUI thread whichever thread triggered it, and it is
not a database wait.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

TATE = REPO.parent / "shared" / "data" / "tate"
TICK_MS = 5
OPS = 64
QUERIES = (
    "landscape with a river at sunset",
    "portrait of a woman in a red dress",
    "Turner watercolour of Venice",
    "abstract sculpture in bronze",
    "vista del mar amb vaixells",
)
T = TypeVar("T")


class Ticker:
    """A 5 ms QTimer on the GUI thread recording when it fired."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.ticks: list[float] = []
        self.full_gc: list[float] = []
        self._gc_start = 0.0
        self.timer = QTimer()
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(lambda: self.ticks.append(time.perf_counter()))

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        """Time full collections: one holds the GIL, so it stalls the GUI whatever thread
        triggered it."""
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._gc_start = time.perf_counter()
        else:
            self.full_gc.append((time.perf_counter() - self._gc_start) * 1000)

    async def measure(self, work: Callable[[], Awaitable[T]]) -> tuple[T, dict[str, float]]:
        """Run ``work()`` on the loop while ticking; its result and the gap figures."""
        self.ticks, self.full_gc = [], []
        self.timer.start()
        await asyncio.sleep(0.05)
        started = time.perf_counter()
        self.ticks.append(started)
        gc.callbacks.append(self._on_gc)
        try:
            result = await work()
        finally:
            gc.callbacks.remove(self._on_gc)
        ended = time.perf_counter()
        await asyncio.sleep(0.02)
        self.timer.stop()
        inside = [t for t in self.ticks if started <= t <= ended] + [ended]
        gaps = sorted((b - a) * 1000 for a, b in itertools.pairwise(inside))
        p99 = gaps[min(len(gaps) - 1, math.ceil(len(gaps) * 0.99) - 1)] if gaps else 0.0
        figures = {
            "seconds": ended - started,
            "max": max(gaps, default=0.0),
            "p99": p99,
            "median": statistics.median(gaps) if gaps else 0.0,
            "ticks": float(len(inside) - 1),
            "full_gc": float(len(self.full_gc)),
            "full_gc_ms": max(self.full_gc, default=0.0),
        }
        return result, figures


def show(name: str, figures: dict[str, float], extra: str = "") -> None:
    print(
        f"  {name}: {figures['seconds']:.3f} s, GUI max gap {figures['max']:.1f} ms, "
        f"p99 {figures['p99']:.1f} ms, median {figures['median']:.1f} ms, "
        f"{figures['ticks']:.0f} ticks (ideal {figures['seconds'] * 1000 / TICK_MS:.0f}), "
        f"full GCs {figures['full_gc']:.0f} (longest {figures['full_gc_ms']:.0f} ms){extra}",
        flush=True,
    )


# -- (a) apply -------------------------------------------------------------------------------
def people_archive(folder: Path) -> Any:
    """A fresh archive with a writable People section (writes switched on)."""
    from app.core.archive import Field, Section, open_archive
    from app.core.archive.write_switch import set_writes_allowed

    archive = open_archive(folder, create=True)
    archive.put_section(
        Section("rsc197", {"lg-eng": "People"}, writable=True, label_field="rsc197_name")
    )
    archive.put_field(Field("rsc197_name", "rsc197", {"lg-eng": "Name"}, "text", position=1))
    archive.put_field(Field("rsc197_born", "rsc197", {"lg-eng": "Birthplace"}, position=2))
    set_writes_allowed(archive, True)
    return archive


def plan_of(run: int) -> dict[str, Any]:
    """32 creates and 32 set_field ops on the records they make: 64 ops."""
    half = OPS // 2
    creates = [
        {
            "op_id": f"c{n}",
            "tool": "dedalo_create_record",
            "args": {"section_tipo": "rsc197", "values": {"Name": f"Person {run}-{n}"}},
            "summary": f"Create Person {run}-{n}",
        }
        for n in range(half)
    ]
    sets = [
        {
            "op_id": f"s{n}",
            "tool": "dedalo_set_field",
            "args": {
                "section_tipo": "rsc197",
                "section_id": {"ref": f"c{n}"},
                "field": "Birthplace",
                "value": f"Town {n}",
            },
            "summary": f"Set the birthplace of Person {run}-{n}",
        }
        for n in range(half)
    ]
    return {"summary": f"{OPS} people, run {run}", "ops": creates + sets}


def session_of(archive: Any) -> Any:
    """The real session over ``archive`` with a scripted local model (no model is run)."""
    from app.core.models.catalog import catalog_from_data
    from app.core.models.scripted import ScriptedModel
    from app.core.session import AssistantSession, AssistantSettings

    entry = {
        "id": "local-bench",
        "label": "Local bench model",
        "provider": "scripted",
        "model": "scripted",
        "egress": "local",
        "default": True,
    }
    model = ScriptedModel([], id="scripted")
    return AssistantSession(
        archive,
        catalog_from_data([entry]),
        settings=AssistantSettings(write_allowed=True),
        model_factory=lambda _entry: model,
    )


def resolver(session: Any) -> Any:
    """What the confirm card calls: ``session.plans.resolve`` (``session.resolve`` before the
    session was split into state owners)."""
    found = getattr(session, "resolve", None)
    return found if found is not None else session.plans.resolve


async def propose(session: Any, run: int, ops: int = OPS) -> str:
    """Validate the run's plan and put it in the session's plan book; its pending id."""
    from app.core.agent.plan_book import NewPlan
    from app.core.agent.plans import validate_plan

    plan = plan_of(run)
    if ops < OPS:  # the first creates and, from the second half, the sets on them
        plan["ops"] = plan["ops"][: ops // 2] + plan["ops"][OPS // 2 : OPS // 2 + ops // 2]
    checked = validate_plan(plan, session.archive, session.registry)
    record = await session.plans.book.add(
        NewPlan(checked, conversation_id=None, model_id="scripted", egress="local")
    )
    return str(record.id)


async def bench_apply(ticker: Ticker, work: Path, runs: int) -> None:
    archive = people_archive(work / "people")
    session = session_of(archive)
    print(f"(a) apply of a {OPS}-op plan through the session's resolve (confirm card path):")
    await resolver(session)(await propose(session, runs + 1, ops=2), True)  # warm-up: 2 ops
    worst = 0.0
    for run in range(runs):
        pending = await propose(session, run)
        report, figures = await ticker.measure(partial(resolver(session), pending, True))
        worst = max(worst, figures["max"])
        ops = len(report.applied) if report is not None else 0
        ok = report is not None and report.ok
        show(f"run {run + 1}", figures, f", ok={ok}, ops applied={ops}")
    print(f"  apply: worst GUI max gap {worst:.1f} ms over {runs} runs", flush=True)
    raw = people_archive(work / "people-raw")
    raw_session = session_of(raw)
    pending = await propose(raw_session, 0)
    started = time.perf_counter()
    await resolver(raw_session)(pending, True)
    print(f"  raw floor (same apply, no timer): {time.perf_counter() - started:.3f} s")
    raw.close()
    archive.close()


async def applied_and_shown(window: Any, session: Any, pending: str) -> Any:
    """Apply ``pending`` as the card does and wait until the window shows the archive again
    (the plan desk's announcement reaches the panel, the window reads what it shows again)."""
    shown: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def on_refreshed() -> None:
        if not shown.done():
            shown.set_result(None)

    window.refreshed.connect(on_refreshed)
    try:
        report = await resolver(session)(pending, True)
        await asyncio.wait_for(shown, 30)
    finally:
        window.refreshed.disconnect(on_refreshed)
    return report


async def bench_apply_in_window(ticker: Ticker, work: Path, runs: int) -> None:
    from app.core.archive import RecordKey
    from app.ui.app_settings import AppSettings
    from app.ui.browser.sections_view import COUNT_ROLE
    from app.ui.main_window import MainWindow
    from app.ui.services import Services

    archive = people_archive(work / "window")
    session = session_of(archive)
    services = Services(archive, AppSettings(work / "window-settings.json"))
    services.set_session(session)
    window = MainWindow(services)
    window.resize(1400, 900)
    window.show()
    await window.assistant.cards.session()  # the panel hears the plan desk from now on
    print("(a2) the same apply in a main window, until the window shows it again (refresh):")
    await applied_and_shown(window, session, await propose(session, runs + 1, ops=2))
    window.open_record(RecordKey("rsc197", 1))  # a record open: the refresh reads it again
    worst = 0.0
    for run in range(runs):
        pending = await propose(session, run)
        report, figures = await ticker.measure(partial(applied_and_shown, window, session, pending))
        worst = max(worst, figures["max"])
        shown = window.sections.item(0).data(COUNT_ROLE)
        show(f"run {run + 1}", figures, f", ok={report.ok}, section count shown={shown}")
    print(f"  apply in the window: worst GUI max gap {worst:.1f} ms over {runs} runs", flush=True)
    window.close()
    await window.aclose()
    await services.aclose()
    archive.close()


# -- (b) search ------------------------------------------------------------------------------
def tate_archive(folder: Path) -> Any:
    """The Tate archive in ``folder`` (imported and chunked on the first run)."""
    from app.core.archive import open_archive
    from app.core.archive.importers import run_import
    from app.core.index.indexer import sync_chunks

    if (folder / "archive.db").exists() and (folder / "gap-ready").exists():
        return open_archive(folder)
    started = time.perf_counter()
    archive = open_archive(folder, create=True)
    summary = run_import(archive, "tate", TATE)
    sync_chunks(archive)  # a no-op when the import chunked every record already
    (folder / "gap-ready").write_text("ok\n")
    print(
        f"  built {folder}: {summary.records:,} records in {time.perf_counter() - started:.1f} s",
        flush=True,
    )
    return archive


async def bench_search(ticker: Ticker, folder: Path) -> None:
    from app.core.index.embedders import SentenceTransformerEmbedder
    from app.core.index.service import Index
    from app.ui.app_settings import AppSettings
    from app.ui.main_window import MainWindow
    from app.ui.services import Services

    print(f"(b) search box on the Tate archive ({folder}):")
    if not TATE.exists() and not (folder / "gap-ready").exists():
        print(f"  skipped: the Tate dataset is not at {TATE}")
        return
    archive = tate_archive(folder)
    with archive.db.reading() as conn:
        chunks = int(conn.execute("SELECT count(*) FROM index_chunks").fetchone()[0])
        vectors = int(conn.execute("SELECT count(*) FROM index_vectors").fetchone()[0])
    print(f"  {archive.count_records():,} records, {chunks:,} chunks, {vectors:,} vectors")
    index = Index(archive, SentenceTransformerEmbedder())
    services = Services(archive, AppSettings(folder / "bench-settings.json"))
    services._index = index  # the app's index factory builds the same Index; this one is ours
    window = MainWindow(services)
    window.resize(1400, 900)
    window.show()
    await window.search("warm up the model and the matrix")
    worst = 0.0
    for query in QUERIES:
        _, figures = await ticker.measure(partial(window.search, query))
        worst = max(worst, figures["max"])
        show(repr(query), figures, f", {window.results.list.count()} hits")
    print(f"  search: worst GUI max gap {worst:.1f} ms over {len(QUERIES)} queries", flush=True)
    window.close()
    await services.aclose()
    archive.close()


async def main_async(args: argparse.Namespace) -> None:
    ticker = Ticker()
    with tempfile.TemporaryDirectory(prefix="arxiu-gap-") as tmp:
        await bench_apply(ticker, Path(tmp), args.runs)
        await bench_apply_in_window(ticker, Path(tmp), args.runs)
    if not args.no_search:
        await bench_search(ticker, Path(args.tate_dir))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="applies of the 64-op plan")
    parser.add_argument("--tate-dir", default="/tmp/arxiu-gap-tate", help="Tate archive folder")
    parser.add_argument("--no-search", action="store_true", help="only the apply")
    args = parser.parse_args()

    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv)
    QApplication.setQuitOnLastWindowClosed(False)  # (a2) closes its window before (b) opens another
    from app.ui.gui_thread import GuiThreadCollector

    collector = GuiThreadCollector(app)  # as the app does: cyclic collections on the GUI timer
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    import app as arxiu

    print(
        f"code: {Path(arxiu.__file__).parent}  python {sys.version.split()[0]}  "
        f"cpus {os.cpu_count()}"
    )
    with loop:
        loop.run_until_complete(main_async(args))
    collector.stop()


if __name__ == "__main__":
    main()
