"""A Catalan question in the assistant panel finds the Catalan displacement interviews (slow:
the real MiniLM and USE models index the archive; the chat model is scripted, and cites what
the semantic search tool returned)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive, Field, Section, open_archive
from app.core.index import Index
from app.core.index.embedders import default_embedders
from tests.ui.panel_questions import ask_in_panel

QUESTION = "Quines entrevistes parlen de les famílies que van haver de marxar pel pantà?"
INTERVIEWS = [
    (
        "La casa sota l'aigua",
        "lg-cat",
        "Quan van omplir el pantà ens van fer marxar de casa. "
        "Tota la família va haver de deixar el poble i anar a viure a Manlleu.",
    ),
    (
        "El darrer estiu a la vall",
        "lg-cat",
        "L'estiu abans de la inundació vam recollir les "
        "coses. Els veïns marxaven un a un; la presa va negar les cases i els horts.",
    ),
    (
        "Desallotjats",
        "lg-cat",
        "Ens van expropiar la masia per fer l'embassament. El meu pare "
        "no ho va acceptar mai; vam haver de començar de nou lluny de la vall.",
    ),
    (
        "La festa major",
        "lg-cat",
        "A la festa major ballàvem sardanes a la plaça i els castellers "
        "feien pilars. Era el dia més alegre de l'any.",
    ),
    (
        "El mercat del dissabte",
        "lg-cat",
        "Cada dissabte anàvem al mercat a vendre ous i formatges. La meva àvia coneixia tothom.",
    ),
    (
        "La escuela del pueblo",
        "lg-spa",
        "La maestra nos enseñaba a leer con un libro viejo. "
        "En invierno la estufa apenas calentaba el aula.",
    ),
]


def build(folder: Path) -> Archive:
    archive = open_archive(folder, create=True)
    archive.put_section(Section("oh1", {"lg-cat": "Entrevistes"}, label_field="oh2"))
    archive.put_field(Field("oh2", "oh1", {"lg-cat": "Títol"}, "text", True, position=1))
    archive.put_field(
        Field("oh3", "oh1", {"lg-cat": "Transcripció"}, "transcription", True, position=2)
    )
    for title, lang, text in INTERVIEWS:
        archive.create_record(
            "oh1",
            {
                "oh2": [{"lang": lang, "value": title}],
                "oh3": [{"lang": lang, "value": f"[TC_00:00:05.000_TC] {text}"}],
            },
        )
    return archive


@pytest.fixture
def indexed(tmp_path: Path) -> Iterator[tuple[Archive, Index]]:
    archive = build(tmp_path / "archive")
    index = Index(archive, default_embedders())
    index.index_now()
    yield archive, index
    index.close()
    archive.close()


@pytest.mark.slow
def test_a_catalan_question_cites_the_catalan_displacement_interviews(
    qtbot: Any, qloop: Any, indexed: tuple[Archive, Index]
) -> None:
    archive, index = indexed
    cited, text = ask_in_panel(qloop, archive, index, QUESTION, k=3, timeout=150.0)
    assert set(cited) == {"oh1/1", "oh1/2", "oh1/3"}, text
