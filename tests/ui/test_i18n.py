"""The translation tables change words, never what Qt itself needs (image decoding, format
strings): a record's thumbnail renders the same in English, Catalan and Spanish."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication, QUrl
from PySide6.QtGui import QImage, QTextCursor, QTextDocument

from app.core.archive import RecordKey
from app.core.archive.demo import ensure_demo_archive
from app.core.errors import ArchiveError
from app.ui import i18n
from app.ui.browser.record_view import RecordView


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return ensure_demo_archive(tmp_path_factory.mktemp("demo") / "demo")


def _thumbnail(view: RecordView) -> QImage:
    """The image the record view's document holds for its first thumbnail."""
    document = view.browser.document()
    html = view.browser.toHtml()
    start = html.index('<img src="') + len('<img src="')
    url = html[start : html.index('"', start)]
    resource = document.resource(QTextDocument.ResourceType.ImageResource, QUrl(url))
    return resource.toImage() if hasattr(resource, "toImage") else QImage()


def _painted_colours(view: RecordView) -> int:
    """How many colours the record view paints where its first image sits (an empty box: one
    or two)."""
    document = view.browser.document()
    block, position = document.begin(), None
    while block.isValid() and position is None:
        fragments = block.begin()
        while not fragments.atEnd() and position is None:
            fragment = fragments.fragment()
            if fragment.charFormat().isImageFormat():
                position = fragment.position()
            fragments += 1
        block = block.next()
    assert position is not None, "the record view shows no image"
    cursor = QTextCursor(document)
    cursor.setPosition(position)
    spot = view.browser.cursorRect(cursor)  # the image's left edge, as tall as its line
    spot.translate(view.browser.viewport().pos())
    shot = view.browser.grab().toImage()
    return len(
        {
            shot.pixel(x, y)
            for x in range(spot.left() + 4, spot.left() + 100, 4)
            for y in range(spot.top() + 10, spot.bottom() - 10, 4)
        }
    )


@pytest.mark.parametrize("lang", ["en", "ca", "es"])
def test_an_image_record_shows_its_thumbnail_in_every_ui_language(
    qapp: Any, demo: Any, lang: str
) -> None:
    translator = i18n.install_translator(qapp, lang)
    try:
        view = RecordView(demo, lang=i18n.ARCHIVE_LANGS[lang])
        view.resize(700, 900)
        view.show_record(RecordKey("rsc170", 1))
        view.browser.grab()  # lays the document out, which loads its images
        image = _thumbnail(view)
        assert not image.isNull(), f"no thumbnail decoded in {lang}"
        assert image.height() > 50
        colours = {image.pixel(x, y) for x in range(0, image.width(), 7) for y in (10, 60, 100)}
        assert len(colours) > 5, "the thumbnail is blank"
        assert _painted_colours(view) > 5, f"an empty box where the thumbnail should be ({lang})"
        view.close()
    finally:
        if translator is not None:
            qapp.removeTranslator(translator)


def test_a_missing_translation_keeps_qt_s_own_strings(qapp: Any) -> None:
    translator = i18n.install_translator(qapp, "ca")
    assert translator is not None
    try:
        # Qt formats this with .arg(); an empty "translation" made it an empty string.
        assert QCoreApplication.translate("QImageReader", "Unknown error") == "Unknown error"
        assert QCoreApplication.translate("Arxiu", "Send") == "Envia"
    finally:
        qapp.removeTranslator(translator)


def test_thumbnails_live_in_the_archive_media_folder(demo: Any) -> None:
    assert any(Path(demo.media_dir, "thumbs").iterdir())


@pytest.mark.parametrize(
    ("lang", "label"), [("en", ""), ("ca", "Arxiu malmès"), ("es", "Archivo dañado")]
)
def test_an_error_is_labelled_in_the_ui_language(qapp: Any, lang: str, label: str) -> None:
    error = ArchiveError(
        "archive.corrupt", "The archive database x is damaged.", hint="Restore it from a backup."
    )
    translator = i18n.install_translator(qapp, lang)
    try:
        line, box = i18n.error_text(error), i18n.error_text(error, paragraphs=True)
    finally:
        if translator is not None:
            qapp.removeTranslator(translator)
    said = "The archive database x is damaged."
    if not label:  # English: the message says it all
        assert line == f"{said} Restore it from a backup."
        assert box == f"{said}\n\nRestore it from a backup."
    else:
        assert line == f"{label}: {said} Restore it from a backup."
        assert box == f"{label}\n\n{said}\n\nRestore it from a backup."


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_the_cli_and_the_window_write_a_number_alike(
    lang: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``arxiu`` in a terminal and the window's locale (Qt, CLDR) group the same digits:
    Spanish ``1234`` but ``12.345``, Catalan ``1.234``, English ``1,234``."""
    from PySide6.QtCore import QLocale

    from app.commands import cli_words

    monkeypatch.setenv("ARXIU_LANG", lang)
    locale = QLocale(i18n.LOCALES[lang])
    for n in (7, 999, 1234, 9999, 10_000, 72_736, 1_234_567):
        assert cli_words.number(n) == locale.toString(n), n
