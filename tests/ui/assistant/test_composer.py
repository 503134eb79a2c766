"""The composer says how many images go with the next question in words that agree with the
count (1 imatge adjunta, 2 imatges adjuntes) in Catalan, Spanish and English."""

from __future__ import annotations

from typing import Any

import pytest

from app.ui import i18n
from app.ui.assistant.composer import ComposerWidget

ATTACHED = {
    "ca": ["", "1 imatge adjunta", "2 imatges adjuntes"],
    "es": ["", "1 imagen adjunta", "2 imágenes adjuntas"],
    "en": ["", "1 image attached", "2 images attached"],
}
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_the_images_attached_agree_with_their_number(qapp: Any, lang: str) -> None:
    translator = i18n.install_translator(qapp, lang)
    try:
        composer = ComposerWidget()
        said = []
        for count in (0, 1, 2):
            composer.set_images([(f"photo{n}.png", PNG) for n in range(count)])
            said.append(composer.images_label.text())
        composer.deleteLater()
    finally:
        if translator is not None:
            qapp.removeTranslator(translator)
    assert said == ATTACHED[lang]
