"""What a job on a worker thread captured, and Python's cyclic garbage, are freed on the GUI
thread: freed on a worker, a Qt object crashes the process (CI died in ``del work_item`` of
``concurrent.futures`` while the UI tests ran). Each mechanism is shown first without the guard,
so a test that passes with it would fail without it."""

from __future__ import annotations

import asyncio
import gc
import threading
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive
from app.ui.app_settings import AppSettings
from app.ui.gui_thread import COLLECT_EVERY_MS, GuiThreadCollector, run_released
from app.ui.services import Services
from tests.ui.conftest import run


class Tracked:
    """Records the name of the thread it is freed on."""

    def __init__(self, freed: list[str]) -> None:
        self.freed = freed
        self.cycle: object = None

    def __del__(self) -> None:
        self.freed.append(threading.current_thread().name)


def job_holding(
    freed: list[str], started: threading.Event, go_on: threading.Event
) -> Callable[[], int]:
    """A job whose only reference to its :class:`Tracked` is its own capture (as an import's
    progress callback is the only reference left to a closed dialog)."""
    tracked = Tracked(freed)

    def job() -> int:
        started.set()
        assert go_on.wait(5)
        return len(tracked.freed)

    return job


async def cancelled_while_running(
    submit: Callable[[Callable[[], int]], asyncio.Future[int]], freed: list[str]
) -> None:
    """Start the job, cancel its caller while it runs (the window closed), then let it end."""
    started, go_on = threading.Event(), threading.Event()
    waiter = submit(job_holding(freed, started, go_on))
    assert await asyncio.to_thread(started.wait, 5)
    waiter.cancel()
    go_on.set()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    for _ in range(50):
        if freed:
            return
        await asyncio.sleep(0.02)


def test_without_the_guard_the_worker_frees_what_a_cancelled_job_captured(qloop: Any) -> None:
    """The mechanism: ``concurrent.futures`` drops the job after running it, on the worker."""
    freed: list[str] = []
    with ThreadPoolExecutor(1, thread_name_prefix="worker") as pool:
        run(qloop, cancelled_while_running(lambda job: qloop.run_in_executor(pool, job), freed))
    assert freed and freed[0].startswith("worker")


def test_a_job_run_through_services_lets_go_of_its_capture_on_the_gui_thread(
    qloop: Any, ui_archive: Archive, tmp_path: Path
) -> None:
    freed: list[str] = []
    services = Services(ui_archive, AppSettings(tmp_path / "settings.json"))

    def submit(job: Callable[[], int]) -> asyncio.Future[int]:
        return asyncio.ensure_future(services.run_blocking(job))

    run(qloop, cancelled_while_running(submit, freed))
    run(qloop, services.aclose())
    assert freed == [threading.current_thread().name]


def test_an_archive_read_lets_go_of_its_capture_on_the_gui_thread(
    qloop: Any, ui_archive: Archive, tmp_path: Path
) -> None:
    freed: list[str] = []
    services = Services(ui_archive, AppSettings(tmp_path / "settings.json"))

    def submit(job: Callable[[], int]) -> asyncio.Future[int]:
        return asyncio.ensure_future(services.read(job))

    run(qloop, cancelled_while_running(submit, freed))
    run(qloop, services.aclose())
    assert freed == [threading.current_thread().name]


def test_a_failed_job_reaches_the_caller_without_its_frames_holding_the_capture(
    qloop: Any,
) -> None:
    freed: list[str] = []

    def failing() -> Callable[[], int]:
        tracked = Tracked(freed)

        def job() -> int:
            held = tracked
            raise ValueError(f"no {held.__class__.__name__}")

        return job

    async def call() -> str:
        loop = asyncio.get_running_loop()
        with ThreadPoolExecutor(1, thread_name_prefix="worker") as pool:
            try:
                await run_released(lambda job: loop.run_in_executor(pool, job), failing())
            except ValueError as error:
                where = traceback.extract_tb(error.__traceback__)
                return f"{error} in {where[-1].name}"
        raise AssertionError("the job did not fail")

    told = run(qloop, call())
    assert told == "no Tracked in job"  # the error and where it was raised reach the caller
    run(qloop, asyncio.sleep(0.05))
    assert freed == [threading.current_thread().name]


def cycle_of(freed: list[str]) -> None:
    """A :class:`Tracked` in a reference cycle, left for the cyclic collector (a dialog whose
    lambda slot refers back to it)."""
    tracked = Tracked(freed)
    tracked.cycle = tracked


def allocate_on_a_worker(keep: list[object], enable: bool) -> None:
    """Allocate enough containers on a worker thread to cross the collector's threshold."""

    def allocate() -> None:
        if enable:
            gc.enable()
        try:
            keep.extend([] for _ in range(50_000))
        finally:
            if enable:
                gc.disable()

    worker = threading.Thread(target=allocate, name="worker")
    worker.start()
    worker.join()


def test_without_the_collector_a_worker_collects_the_gui_threads_cycles(
    gui_thread_collector: GuiThreadCollector,
) -> None:
    """The mechanism: the automatic collector runs on the thread that allocates."""
    freed: list[str] = []
    keep: list[object] = []
    cycle_of(freed)
    allocate_on_a_worker(keep, enable=True)
    assert freed == ["worker"]


def test_the_collector_collects_cycles_on_the_gui_thread_only(
    qtbot: Any, gui_thread_collector: GuiThreadCollector
) -> None:
    assert not gc.isenabled()
    freed: list[str] = []
    keep: list[object] = []
    cycle_of(freed)
    allocate_on_a_worker(keep, enable=False)
    assert freed == []  # the worker crossed the threshold and collected nothing
    qtbot.waitUntil(lambda: bool(freed), timeout=COLLECT_EVERY_MS * 6)
    assert freed == [threading.current_thread().name]


def test_stopping_the_collector_turns_the_automatic_one_back_on(qapp: Any) -> None:
    was = gc.isenabled()
    gc.enable()
    try:
        collector = GuiThreadCollector(qapp)
        assert not gc.isenabled()
        collector.stop()
        assert gc.isenabled()
        collector.deleteLater()
    finally:
        if not was:
            gc.disable()
