"""``arxiu --screenshot PNG --show STATE``: render one state of the window for the README.

``conversation`` and ``confirm-card`` play a scripted model (:mod:`app.ui.demo_script`)
through the real session, so what is shown is what the app renders for a real run.
``import`` renders File → Import…'s dialog, ``import-csv-mapping`` its mapping page for the
table in ``ARXIU_SHOT_TABLE`` (else a small sample table written for the shot), and
``record-hierarchy`` the record view of a component with a parent and children (the archive
needs a hierarchical section, e.g. an EAD import). ``search`` types a query in the search box
and shows the results by record: ``ARXIU_SHOT_QUERY``, else a question about the flooded
valley in the UI's language (:data:`SEARCH_QUERIES`); with ``ARXIU_SHOT_WITHIN`` (``ead1/1``)
it searches within that record, as its record view's "Search within this description" does.

``composed-answer`` asks the real session (the catalog's default model, the archive's index:
build it first with ``arxiu index``) the reservoir list question in the UI's language
(``ARXIU_SHOT_QUERY`` instead, if set), which the core answers itself with the bundled model.

``ARXIU_SHOT_SIZE`` (``800x600``) renders at another window size than 1600×940, and
``ARXIU_SHOT_RECORD`` (``tp1/8``) opens that record instead of the state's own.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path

from PySide6.QtWidgets import QWidget

from app.core.archive import RecordKey
from app.core.archive.hierarchy import children_of, hierarchy_of, parent_of
from app.ui import demo_script
from app.ui.main_window import MainWindow

IDLE_TIMEOUT_S = 30.0
QUESTIONS = {
    "conversation": "Which interviews talk about families who had to leave when the reservoir "
    "flooded the valley?",
    "confirm-card": "Create a person record for Anna Pujol, born 1931, and link her as the "
    "informant of this interview.",
}
SEARCH_QUERIES = {
    "lg-cat": "famílies que van haver de marxar pel pantà",
    "lg-spa": "familias que tuvieron que marcharse por el embalse",
    "lg-eng": "families who had to leave because of the reservoir",
}
COMPOSED_QUESTIONS = {
    "lg-cat": "Quines entrevistes parlen de les famílies que van haver de marxar pel pantà?",
    "lg-spa": "¿Qué entrevistas hablan de las familias que tuvieron que irse por el pantano?",
    "lg-eng": "Which interviews talk about the families who had to leave because of the reservoir?",
}
SEARCH_TIMEOUT_S = 300.0
"""A search may first start the index's model process (minutes on a busy machine)."""
SIZE = (1600, 940)
DIALOG_STATES = ("import", "import-csv-mapping")
SAMPLE_TABLE = (
    "Signatura;Títol;Data;Nivell;Forma part de;Abast i contingut\n"
    "F1;Fons Puig i Ferrer;1890-1975;fons;;Papers d'una família de pagesos del Lluçanès.\n"
    "F1-S1;Correspondència;1902-1968;sèrie;F1;Cartes rebudes i enviades.\n"
    "F1-S1-1;Cartes de Maria Puig;1931-1939;unitat documental;F1-S1;Cartes de la guerra.\n"
)


async def wait_idle(window: MainWindow, timeout_s: float = IDLE_TIMEOUT_S) -> None:
    """Wait until no run or task is going and the event queue is drained."""
    deadline = time.monotonic() + timeout_s
    quiet = 0
    while time.monotonic() < deadline and quiet < 5:
        await asyncio.sleep(0.05)  # the qasync loop processes Qt events meanwhile
        quiet = 0 if window.is_busy() else quiet + 1


def showcase_record(window: MainWindow) -> RecordKey | None:
    """A record worth showing: an oral history, else a coin, else the first record."""
    archive = window.services.archive
    interviews = demo_script.flood_interviews(archive, limit=1)
    if interviews:
        return interviews[0].key
    for section in archive.sections():
        records = archive.list_records(section.tipo, limit=1)
        if records:
            return records[0].key
    return None


def record_with_media(window: MainWindow) -> RecordKey | None:
    """A record with a picture (the record view shows its thumbnail), if the archive has one."""
    from app.core.archive.media import media_of

    archive = window.services.archive
    for section in archive.sections():
        for record in archive.list_records(section.tipo, limit=50):
            if any(m.mime.startswith("image/") for m in media_of(archive, record.key)):
                return record.key
    return None


def hierarchy_record(window: MainWindow) -> RecordKey | None:
    """A record with a parent and children in a hierarchical section (the deepest found)."""
    archive, best = window.services.archive, None
    for section in archive.sections():
        shape = hierarchy_of(archive, section.tipo)
        if shape is None:
            continue
        for record in archive.list_records(section.tipo, limit=400):
            if parent_of(archive, record.key, shape) and children_of(archive, record.key):
                best = record.key
    return best


async def _dialog_shot(window: MainWindow, state: str) -> QWidget:
    """Open File → Import… (on the mapping page for ``import-csv-mapping``)."""
    dialog = window.choose_import()
    if state == "import-csv-mapping":
        table = os.environ.get("ARXIU_SHOT_TABLE")
        if not table:
            folder = Path(tempfile.mkdtemp(prefix="arxiu-shot-"))
            (folder / "fons-puig.csv").write_text(SAMPLE_TABLE, encoding="utf-8")
            table = str(folder / "fons-puig.csv")
        from app.ui.import_dialog import ImportChoiceDialog

        assert isinstance(dialog, ImportChoiceDialog)
        dialog.select_kind("csv")
        dialog.path.setText(table)
        dialog.next_page()
    await wait_idle(window)
    return dialog


def chosen_record() -> RecordKey | None:
    """The record ``ARXIU_SHOT_RECORD`` names (``None``: none, or not a key)."""
    try:
        return RecordKey.parse(os.environ.get("ARXIU_SHOT_RECORD", ""))
    except ValueError:
        return None


def shot_size() -> tuple[int, int]:
    """The window size: ``ARXIU_SHOT_SIZE`` (``WIDTHxHEIGHT``), else 1600×940."""
    width, _, height = os.environ.get("ARXIU_SHOT_SIZE", "").lower().partition("x")
    if width.isdigit() and height.isdigit():
        return int(width), int(height)
    return SIZE


async def _search_shot(window: MainWindow) -> None:
    """Type the query in the search box, press Enter, wait for the results."""
    query = os.environ.get("ARXIU_SHOT_QUERY") or SEARCH_QUERIES.get(
        window.services.lang, SEARCH_QUERIES["lg-eng"]
    )
    window.search_box.setText(query)
    within = os.environ.get("ARXIU_SHOT_WITHIN", "")
    if within:
        window.search_within(RecordKey.parse(within))
    else:
        window.search_box.returnPressed.emit()
    await wait_idle(window, SEARCH_TIMEOUT_S)
    shown = window.results.shown()
    if shown:  # open the first record, as a click on it does
        window.open_record(shown[0].key)
    await wait_idle(window)


async def capture(window: MainWindow, state: str, path: Path) -> None:
    """Render ``state`` and save the window (or the dialog it shows) as ``path``."""
    window.resize(*shot_size())
    window.show()
    key = showcase_record(window)
    if state == "record":
        key = record_with_media(window) or key
    if state == "record-hierarchy":
        key = hierarchy_record(window) or key
    key = chosen_record() or key
    if key is not None:
        window.open_record(key)
    if state in QUESTIONS:
        await _scripted_run(window, state, key)
    elif state == "composed-answer":
        await _composed_run(window)
    else:  # the picker filled as in the app, without loading a real model
        window.services.set_session(demo_script.demo_session(window.services.archive, []))
        await window.assistant.load_models()
    await wait_idle(window)
    if state == "search":
        await _search_shot(window)
    shown: QWidget = await _dialog_shot(window, state) if state in DIALOG_STATES else window
    path.parent.mkdir(parents=True, exist_ok=True)
    if not shown.grab().save(str(path)):
        raise OSError(f"could not write {path}")


async def _composed_run(window: MainWindow) -> None:
    """Ask the real session the reservoir list question in the UI's language."""
    lang = window.services.lang
    await window.services.session()
    await window.assistant.load_models()
    query = os.environ.get("ARXIU_SHOT_QUERY") or COMPOSED_QUESTIONS.get(
        lang, COMPOSED_QUESTIONS["lg-eng"]
    )
    window.assistant.send(query)
    await wait_idle(window, SEARCH_TIMEOUT_S)
    window.assistant.view.verticalScrollBar().setValue(0)  # the question and the count


async def _scripted_run(window: MainWindow, state: str, key: RecordKey | None) -> None:
    archive, lang = window.services.archive, window.services.lang
    if state == "confirm-card":
        script = demo_script.plan_script(archive, key)
    else:
        script = demo_script.conversation_script(archive, lang)
    window.services.set_session(demo_script.demo_session(archive, script, lang))
    await window.assistant.load_models()
    window.assistant.picker.select(demo_script.SCRIPTED_ENTRY["id"])  # not a saved last model
    if state == "confirm-card":
        window.assistant.mode.setCurrentIndex(window.assistant.mode.findData("write"))
        if key is not None:
            await window.assistant.set_context_record(key)
    window.assistant.send(QUESTIONS[state])
    await wait_idle(window)
