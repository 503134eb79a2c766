"""A list question's noun keeps its list to the sections it names: "¿Qué entrevistas…?" lists
interviews, not the subject headings an import made beside them; on the real OHMS export."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.agent.composed_answer import lead_sections, list_sections_of
from app.core.agent.events import FinalEvent, ToolUseEvent
from app.core.agent.noun_sections import list_sections, names_kind
from app.core.agent.request import ChatRequest
from app.core.archive import Archive, RecordKey, open_archive
from app.core.archive.importers import run_import
from app.core.models.catalog import Catalog
from app.core.models.scripted import ScriptedModel
from app.core.tools.base import ToolResult
from app.core.tools.registry import build_registry
from tests.conftest import shared_data
from tests.core.agent.conftest import RecordingSearcher, collect, entry, session_factory

OHMS_LABELS = {
    "lg-eng": "Oral-history interviews (OHMS)",
    "lg-cat": "Entrevistes d'història oral (OHMS)",
    "lg-spa": "Entrevistas de historia oral (OHMS)",
}


@pytest.mark.parametrize(
    ("labels", "noun", "named"),
    [
        (OHMS_LABELS.values(), "entrevistes", True),
        (OHMS_LABELS.values(), "entrevistas", True),
        (OHMS_LABELS.values(), "interviews", True),
        (["Història oral", "Historia oral", "Oral history"], "entrevistes", True),  # the demo
        (["Oral histories"], "testimonies", True),
        (["Matèries", "Materias", "Subjects"], "entrevistas", False),
        (["Imatges", "Imágenes", "Images"], "fotos", True),
        (["Fotografies"], "photographs", True),
        (["Cartes de Puig"], "cartas", True),
        (["Correspondence"], "letters", True),
        (["Monedes", "Monedas", "Coins"], "imatges", False),
        (["Persones", "Personas", "People"], "interviews", False),
        (["Oral-history interviews"], "documents", False),  # a generic noun names no kind
    ],
)
def test_a_section_is_of_the_kind_its_labels_say(labels: list[str], noun: str, named: bool) -> None:
    assert names_kind(labels, noun) is named


def test_the_list_looks_in_the_sections_the_noun_names_among_those_found() -> None:
    labels = {
        "subject1": ["Matèries", "Materias", "Subjects"],
        "ohms1": list(OHMS_LABELS.values()),
        "oh2": ["Entrevistes (còpia)"],
    }
    lead = ["subject1", "ohms1"]
    found = ["subject1", "ohms1", "subject1"]
    assert list_sections(lead, found, labels, "entrevistas") == ["ohms1"]
    assert list_sections(lead, found, labels, "documentos") == lead  # generic: as before
    assert list_sections(lead, found, labels, None) == lead
    assert list_sections(lead, found, labels, "fotografies") == lead  # no such section found
    # a section the first search did not return is not added (the gate saw only those)
    assert list_sections(lead, found, labels, "interviews") == ["ohms1"]


@pytest.fixture
def ohms(tmp_path: Path) -> Iterator[tuple[Archive, RecordingSearcher]]:
    """The real OHMS export imported, indexed with the hashing embedder."""
    archive = open_archive(tmp_path / "ohms", create=True)
    run_import(archive, "ohms", shared_data("oral-history-ohms"))
    searcher = RecordingSearcher(archive)
    yield archive, searcher
    searcher.index.close()
    archive.close()


@pytest.mark.parametrize(
    ("question", "opening"),
    [
        ("Which interviews talk about chemical warfare?", "I found {n} interviews"),
        ("Quines entrevistes parlen de Chemical Warfare?", "He trobat {n} entrevistes"),
        ("¿Qué entrevistas hablan de Chemical Warfare?", "He encontrado {n} entrevistas"),
    ],
)
async def test_a_list_of_interviews_counts_interviews_only(
    ohms: tuple[Archive, RecordingSearcher], question: str, opening: str
) -> None:
    """The first search finds the subject "Chemical warfare" and its neighbours as well as
    interviews; the list search looks in the interviews only, so the count is of interviews
    and every record listed and cited is one."""
    archive, searcher = ohms
    models = {"local": ScriptedModel(id="local")}
    # a model that writes none of the three: the core composes the answer
    catalog = Catalog((entry("local", default=True, languages=("de",)),))
    make = session_factory(archive, catalog, models, build_registry(), searcher)
    events = await collect(await make().chat(ChatRequest.from_dict({"question": question})))

    final = events[-1]
    assert isinstance(final, FinalEvent) and final.composed and models["local"].calls == []
    assert len([e for e in events if isinstance(e, ToolUseEvent)]) == 2
    [(_, first_filter), (_, list_filter)] = searcher.queries[-2:]
    assert first_filter is not None and not first_filter.sections
    assert list_filter is not None and list_filter.sections == ("ohms1",)
    cited = {RecordKey.parse(str(c.key)) for c in final.citations}
    assert cited and {key.section_tipo for key in cited} == {"ohms1"}
    assert all(c.verified for c in final.citations)
    assert final.answer.startswith(opening.format(n=len(cited)))


def _result(*hits: tuple[str, int, float]) -> ToolResult:
    found = [{"section_tipo": t, "section_id": i, "label": "", "score": s} for t, i, s in hits]
    return ToolResult(ok=True, data={"hits": found})


def test_a_question_for_records_lists_descriptions_not_their_headings(tmp_path: Path) -> None:
    """ "Quins documents hi ha sobre dones sindicalistes?" over the UW finding aids: the first
    search's best records were subject headings ("Labor Unions"…), so its lead section was the
    subjects and the answer listed fourteen headings as "documents". A question that asks for
    records looks for them among the descriptions the search found; a question that asks
    for no records (a composed answer in another language) keeps the lead sections."""
    archive = open_archive(tmp_path / "a", create=True)
    result = _result(
        ("subject1", 10, 1.0), ("subject1", 91, 0.9), ("ead1", 6895, 0.5), ("subject1", 6, 0.8),
        ("ead1", 553, 0.45), ("agent1", 86, 0.4),
    )  # fmt: skip
    assert list_sections_of(result, archive, "documents") == ["ead1"]
    assert list_sections_of(result, archive, None) == ["subject1"]
    headings_only = _result(("subject1", 10, 1.0), ("agent1", 3, 0.9))
    # nothing but headings found: their lead sections, as before
    assert list_sections_of(headings_only, archive, "documents") == lead_sections(headings_only)
    archive.close()
