"""UI responsiveness: GUI-thread stalls while the bundled model streams, and time to window.

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_ui.py [--tokens 256]

1. Launch: a fresh ``python`` runs ``arxiu --screenshot`` on a small archive; the child prints
   the time from interpreter start to the window shown, and whether torch,
   sentence_transformers or llama_cpp were imported by then (they must not be).
2. Streaming: the real bundled SmolLM2 streams an answer of up to ``--tokens`` tokens into the
   assistant panel (no tools: a direct model turn) while a 10 ms QTimer ticks on the GUI thread;
   the longest gap between ticks (max, p99) is the stall the person would feel. Goal: < 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


async def stream_into_panel(archive_dir: Path, tokens: int) -> tuple[list[float], int, float]:
    """Stream a real local answer into the panel; returns tick gaps (ms), emissions, seconds."""
    from PySide6.QtCore import QTimer

    from app.core.archive import open_archive
    from app.core.index.embedders import HashingEmbedder
    from app.core.index.service import Index
    from app.core.models.catalog import builtin_local, catalog_from_data
    from app.core.session import AssistantSession
    from app.ui.app_settings import AppSettings
    from app.ui.main_window import MainWindow
    from app.ui.services import Services

    archive = open_archive(archive_dir)
    index = Index(archive, HashingEmbedder())
    index.index_now()
    entry = {**builtin_local().to_json(), "max_tokens": tokens}
    session = AssistantSession(archive, catalog_from_data([entry]), searcher=index)
    services = Services(archive, AppSettings(archive_dir / "settings.json"))
    services.set_session(session)
    window = MainWindow(services)
    window.show()
    await window.assistant.load_models()
    warm = session.model(session.catalog.get())  # type: ignore[union-attr]
    del warm
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    started = time.perf_counter()
    window.assistant.send("Write a long story about a village flooded by a reservoir.")
    await asyncio.sleep(0.05)
    while window.assistant.is_busy():
        await asyncio.sleep(0.01)
    seconds = time.perf_counter() - started
    timer.stop()
    gaps = [(b - a) * 1000 for a, b in itertools.pairwise(ticks)]
    emissions = window.assistant.bridge.emissions
    for widget in window.assistant.view.widgets()[-3:]:
        text = getattr(widget, "markdown", None) or getattr(widget, "text", lambda: "")()
        print(f"  shown: {type(widget).__name__}: {str(text)[:160]!r}")
    window.close()
    await window.aclose()
    await services.aclose()
    index.close()
    archive.close()
    return gaps, emissions, seconds


def main() -> None:
    """Print the two figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=256)
    args = parser.parse_args()
    from tests.ui.conftest import build_archive

    folder = Path(tempfile.mkdtemp(prefix="arxiu-bench-ui-"))
    build_archive(folder / "archive").close()
    print("launch:", measure_launch(folder / "archive"))
    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    app.setQuitOnLastWindowClosed(False)  # closing the window must not stop the loop here
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        gaps, emissions, seconds = loop.run_until_complete(
            stream_into_panel(folder / "archive", args.tokens)
        )
    gaps.sort()
    p99 = gaps[int(len(gaps) * 0.99) - 1] if gaps else 0.0
    print(f"streaming: {seconds:.2f} s, {emissions} coalesced text emissions, {len(gaps)} ticks")
    print(
        f"GUI-thread tick gap (10 ms timer): max {max(gaps, default=0):.1f} ms, "
        f"p99 {p99:.1f} ms, median {statistics.median(gaps) if gaps else 0:.1f} ms "
        f"(goal: max < 50 ms)"
    )


if __name__ == "__main__":
    main()
