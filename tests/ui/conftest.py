"""UI fixtures: a qasync loop, a small real archive, windows over the real session with a
scripted model, and the checks every UI test gets: no Qt warnings, no threads or timers left."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

import qasync
from PySide6.QtCore import QLocale, QTimer, QtMsgType
from PySide6.QtWidgets import QApplication

from app.core.archive import Archive, Field, RecordKey, Section, open_archive
from app.core.archive.write_switch import set_writes_allowed
from app.core.models.catalog import catalog_from_data
from app.core.models.scripted import ScriptedModel, Turn
from app.core.session import AssistantSession, AssistantSettings
from app.core.tools.registry import ToolRegistry
from app.ui import i18n
from app.ui.app_settings import AppSettings
from app.ui.gui_thread import GuiThreadCollector
from app.ui.main_window import MainWindow
from app.ui.services import Services

T = TypeVar("T")

THREAD_EXIT_S = 2.0
"""How long a stopped worker thread may take to return before it counts as left running."""

PLATFORM_NOISE = frozenset({"This plugin does not support propagateSizeHints()"})
"""What the offscreen platform plugin itself warns on every top-level show (not our code)."""

LOCAL: dict[str, Any] = {
    "id": "local-test",
    "label": "Local test model",
    "provider": "scripted",
    "model": "scripted",
    "egress": "local",
    "default": True,
}
EXTERNAL: dict[str, Any] = {
    "id": "cloud-test",
    "label": "Cloud test model",
    "provider": "scripted",
    "model": "scripted",
    "egress": "external",
    "efforts": ["low", "high"],
}


@pytest.fixture(autouse=True)
def default_locale() -> Iterator[None]:
    """A test that installs a language's translator (which sets the default locale) leaves the
    default locale as it found it."""
    before = QLocale()
    yield
    QLocale.setDefault(before)


@pytest.fixture(scope="session", autouse=True)
def gui_thread_collector(qapp: QApplication) -> Iterator[GuiThreadCollector]:
    """Python's cyclic collector on the GUI thread only, as the app runs it (:mod:`app.main`)."""
    collector = GuiThreadCollector(qapp)
    yield collector
    collector.stop()


@pytest.fixture(autouse=True)
def no_qt_warnings(qtlog: Any) -> Iterator[None]:
    """Fail a test on any Qt warning (or worse) it caused.

    Garbage is collected first, here on the GUI thread: a Qt object with a timer that Python
    frees later on a worker thread makes Qt warn "Timers cannot be stopped from another
    thread" (and can crash the process), so a test's leftovers are freed before the check.
    """
    yield
    gc.collect()
    bad = [
        r.message
        for r in qtlog.records
        if r.type in (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg)
        and r.message not in PLATFORM_NOISE
    ]
    assert not bad, f"Qt warnings: {bad}"


@pytest.fixture(autouse=True)
def english_numbers() -> None:
    """The window's numbers as English writes them unless the test installs a UI language
    (:func:`ui_lang`): the app always sets the locale of its language at start, a test that
    builds a widget alone would otherwise get the system's (``1.200`` under ``LANG=ca_ES``)."""
    QLocale.setDefault(QLocale("en_US"))


@pytest.fixture
def ui_lang(request: pytest.FixtureRequest, qapp: Any) -> Iterator[str]:
    """The UI language a test is parametrised with (``indirect``), its table installed for
    the test and removed after."""
    lang = str(request.param)
    translator = i18n.install_translator(qapp, lang)
    yield lang
    if translator is not None:
        qapp.removeTranslator(translator)


@pytest.fixture
def qloop(qapp: QApplication) -> Iterator[qasync.QEventLoop]:
    """A qasync event loop over the test QApplication."""
    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    yield loop
    loop.close()
    asyncio.set_event_loop(None)


def run(loop: qasync.QEventLoop, coro: Awaitable[T], timeout: float = 20.0) -> T:
    """Run ``coro`` on the qasync loop (Qt events are processed meanwhile)."""
    result: T = loop.run_until_complete(asyncio.wait_for(coro, timeout))
    return result


@contextlib.contextmanager
def emitted(
    loop: qasync.QEventLoop,
    signal: Any,
    *,
    timeout: float = 20.0,
    check: Callable[..., bool] | None = None,
) -> Iterator[list[Any]]:
    """Wait, on the qasync loop, for ``signal`` to be emitted by what the ``with`` body starts.

    Like ``qtbot.waitSignal`` (connected before the body runs; a timeout fails the test; the
    yielded list receives the signal's arguments), but the wait runs the asyncio loop itself:
    ``waitSignal`` spins a nested Qt event loop outside it, where a coroutine that calls
    ``asyncio.get_running_loop()`` (an executor, an awaitable write) raises. ``check``
    filters the emissions, like ``check_params_cb``.
    """
    future: asyncio.Future[tuple[Any, ...]] = loop.create_future()

    def received(*args: Any) -> None:
        if not future.done() and (check is None or check(*args)):
            future.set_result(args)

    signal.connect(received)
    arguments: list[Any] = []
    try:
        yield arguments
        try:
            arguments.extend(run(loop, future, timeout))
        except TimeoutError:
            raise AssertionError(f"signal not emitted within {timeout} s: {signal}") from None
    finally:
        signal.disconnect(received)


def build_archive(folder: Path | str) -> Archive:
    """Interviews (restricted) linked to people (writable), in three languages (``folder``: a
    folder, or a shared archive's ``postgresql://`` URL)."""
    archive = open_archive(folder, create=True)
    archive.put_section(
        Section(
            "oh1",
            {"lg-eng": "Oral history", "lg-cat": "Història oral"},
            restricted=True,
            writable=True,
            label_field="oh1_title",
        )
    )
    archive.put_section(
        Section(
            "rsc197",
            {"lg-eng": "People", "lg-cat": "Persones"},
            writable=True,
            label_field="rsc197_name",
        )
    )
    fields = [
        Field("oh1_title", "oh1", {"lg-eng": "Title"}, "text", True, position=1),
        Field(
            "oh1_informant",
            "oh1",
            {"lg-eng": "Informant"},
            "relation",
            target_section="rsc197",
            position=2,
        ),
        Field(
            "oh1_transcription",
            "oh1",
            {"lg-eng": "Transcription"},
            "transcription",
            True,
            position=3,
        ),
        Field("rsc197_name", "rsc197", {"lg-eng": "Name"}, "text", position=1),
        Field("rsc197_birth", "rsc197", {"lg-eng": "Birth date"}, "date", position=2),
    ]
    for field in fields:
        archive.put_field(field)
    for name, year in (("Maria Vila", "1928"), ("Josep Soler", "1935"), ("Rosa Puig", "1940")):
        archive.create_record(
            "rsc197",
            {
                "rsc197_name": [{"lang": "lg-nolan", "value": name}],
                "rsc197_birth": [{"lang": "lg-nolan", "value": year}],
            },
        )
    for number, (title, text) in enumerate(
        (
            (
                "El pantà de la vall",
                "[TC_00:00:05.000_TC] Quan ens van fer marxar, el poble es va buidar.",
            ),
            ("La riada", "[TC_00:01:10.000_TC] When the water came we left everything."),
            ("El mercat", "[TC_00:00:02.000_TC] Parlem del mercat del dissabte."),
        ),
        start=1,
    ):
        archive.create_record(
            "oh1",
            {
                "oh1_title": [{"lang": "lg-cat", "value": title}],
                "oh1_informant": [
                    {"lang": "lg-nolan", "value": {"section_tipo": "rsc197", "section_id": number}}
                ],
                "oh1_transcription": [{"lang": "lg-cat", "value": text}],
            },
        )
    return archive


@pytest.fixture
def ui_archive(
    tmp_path: Path, archive_engine: str, request: pytest.FixtureRequest
) -> Iterator[Archive]:
    """The small real archive, on each engine (a folder, or a fresh database on the tests'
    PostgreSQL server)."""
    if archive_engine == "postgresql":
        archive = build_archive(str(request.getfixturevalue("pg_database")))
    else:
        archive = build_archive(tmp_path / "archive")
    yield archive
    archive.close()


class WindowFactory:
    """Builds windows over the archive with a scripted session; owns their cleanup."""

    def __init__(self, qtbot: Any, loop: qasync.QEventLoop, archive: Archive) -> None:
        self.qtbot = qtbot
        self.loop = loop
        self.archive = archive
        self.windows: list[MainWindow] = []
        self.models: list[ScriptedModel] = []

    def __call__(
        self,
        script: list[Turn] | None = None,
        *,
        external: bool = False,
        write_allowed: bool = True,
        registry: ToolRegistry | None = None,
    ) -> MainWindow:
        entries = [dict(LOCAL), dict(EXTERNAL)] if external else [dict(LOCAL)]
        model = ScriptedModel(list(script or []), id="scripted")
        self.models.append(model)
        set_writes_allowed(self.archive, write_allowed)  # writes are opt-in per archive
        session = AssistantSession(
            self.archive,
            catalog_from_data(entries),
            settings=AssistantSettings(write_allowed=write_allowed),
            registry=registry,
            model_factory=lambda entry: model,
        )
        services = Services(self.archive, AppSettings())
        services.set_session(session)
        window = MainWindow(services)
        window.show()
        run(self.loop, window.assistant.load_models())
        if external:
            window.assistant.picker.select(EXTERNAL["id"])
        self.windows.append(window)
        return window

    def close_all(self) -> None:
        for window in self.windows:
            window.close()
            run(self.loop, window.aclose())
            run(self.loop, window.services.aclose())
            leftover = [t for t in window.findChildren(QTimer) if t.isActive()]
            window.deleteLater()
            names = [(type(t.parent()).__name__, t.objectName()) for t in leftover]
            assert not leftover, f"timers left running: {names}"
        self.loop.run_until_complete(asyncio.sleep(0))  # deliver the deferred deletes
        # Collect this test's Qt wrapper cycles here, on the GUI thread: left to a later
        # collection they may be freed on a worker thread (Qt warns about their timers).
        gc.collect()


@pytest.fixture
def make_window(
    qtbot: Any, qloop: qasync.QEventLoop, ui_archive: Archive
) -> Iterator[WindowFactory]:
    """``make_window(script, external=False)`` → a shown MainWindow; closed after the test."""
    before = set(threading.enumerate())
    factory = WindowFactory(qtbot, qloop, ui_archive)
    yield factory
    factory.close_all()
    ours = [
        t
        for t in threading.enumerate()
        if t not in before and t.name.startswith(("arxiu-ui", "arxiu-run", "asyncio"))
    ]
    for thread in ours:  # closing stopped them; give each a moment to return
        thread.join(timeout=THREAD_EXIT_S)
    extra = [t for t in ours if t.is_alive()]
    assert not extra, f"threads left running: {extra}"


def key(tipo: str, sid: int) -> RecordKey:
    """Shorthand."""
    return RecordKey(tipo, sid)
