"""Issue 21's reservoir questions with the bundled model on the demo archive (slow: the real
MiniLM and USE models index the whole demo archive, and SmolLM2 answers the English question
it can write).

Each list question gets an answer in its own language, composed by the core: it cites at
least 7 of the 9 displacement interviews, and at least 95% of its words come from the cited
records (their values, keys and sections' labels), the question, or the core's own phrase
tables (:mod:`app.core.agent.answer_phrases`)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.agent.answer_phrases import phrases, vocabulary
from app.core.agent.events import FinalEvent
from app.core.agent.list_questions import list_noun
from app.core.agent.request import ChatRequest
from app.core.archive import Archive, RecordKey, open_archive
from app.core.index import Index
from app.core.index.embedders import default_embedders
from app.core.models.catalog import load_catalog
from app.core.paths import resources_dir
from app.core.session import AssistantSession

pytestmark = pytest.mark.slow

QUESTIONS = {
    "lg-cat": "Quines entrevistes parlen de les famílies que van haver de marxar pel pantà?",
    "lg-spa": "¿Qué entrevistas hablan de las familias que tuvieron que irse por el pantano?",
    "lg-eng": "Which interviews talk about the families who had to leave because of the reservoir?",
}
NONSENSE = (  # the bundled model's Catalan answer that issue 21 quotes: the measure must fail it
    "Quine enseñe que está la vall de l'aigua, quienes han haber sido averes duradores del 1962."
)
MIN_CITED = 7
MIN_SOURCED = 0.95
_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> list[str]:
    """The words of ``text`` (letters and digits, case folded; ``oh1/4`` is two)."""
    return _WORD.findall(text.casefold())


def displacement() -> set[str]:
    """The nine displacement interviews of the demo, as ``tipo/id``."""
    spec = json.loads((resources_dir() / "demo" / "queries.json").read_text(encoding="utf-8"))
    return {str(RecordKey.parse(k)) for keys in spec["displacement"].values() for k in keys}


def allowed_words(archive: Archive, keys: list[RecordKey], question: str) -> set[str]:
    """What a composed answer may say: the cited records' words, the question's, the tables'."""
    texts = [question, *vocabulary()]
    for key in keys:
        record = archive.get_record(key)
        texts.append(str(key))
        texts += [
            str(item["value"])
            for items in record.values.values()
            for item in items
            if isinstance(item.get("value"), str)
        ]
        texts += archive.section(key.section_tipo).labels.values()
    return {word for text in texts for word in words(text)}


def sourced_share(answer: str, allowed: set[str]) -> float:
    """The share of ``answer``'s words that are in ``allowed``."""
    said = words(answer)
    return sum(1 for word in said if word in allowed) / len(said)


@pytest.fixture(scope="module")
def demo(
    demo_archive_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Archive, Index]]:
    """A copy of the demo archive, indexed with the default models."""
    folder = tmp_path_factory.mktemp("composed-demo") / "archive"
    shutil.copytree(demo_archive_dir, folder)
    archive = open_archive(folder)
    index = Index(archive, default_embedders())
    index.index_now()
    yield archive, index
    index.close()
    archive.close()


async def ask(archive: Archive, index: Index, question: str, home: Path) -> FinalEvent:
    """``question`` to the bundled model (the catalog has only the built-in entry)."""
    catalog = load_catalog(home / "no-models.json")
    assert catalog.get().bundled
    session = AssistantSession(archive, catalog, index)
    try:
        events = [
            e async for e in await session.chat(ChatRequest.from_dict({"question": question}))
        ]
    finally:
        await session.aclose()
    final = events[-1]
    assert isinstance(final, FinalEvent), final
    return final


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("lang", list(QUESTIONS))
async def test_the_reservoir_question_is_answered_from_the_records_in_its_language(
    demo: tuple[Archive, Index], lang: str, tmp_path: Path
) -> None:
    archive, index = demo
    question = QUESTIONS[lang]
    final = await ask(archive, index, question, tmp_path)
    assert final.composed and final.stop == "end_turn"
    cited = [c for c in final.citations if c.verified]
    assert len(cited) == len(final.citations)  # every listed record was returned by the search
    found = displacement() & {str(c.key) for c in cited}
    assert len(found) >= MIN_CITED, final.answer
    opening = final.answer.split("\n", 1)[0]
    assert opening == phrases(lang).found(len(cited), list_noun(question))
    for citation in cited:  # each record under its label in the question's language
        assert f"**{archive.record_label(citation.key, lang)}** ({citation.key}" in final.answer
    allowed = allowed_words(archive, [c.key for c in cited], question)
    assert sourced_share(NONSENSE, allowed) < MIN_SOURCED
    share = sourced_share(final.answer, allowed)
    print(
        f"{lang}: {len(found)} of 9 displacement interviews cited ({len(cited)} records), "
        f"{share:.3f} of the words from the records, the question or the tables"
    )
    assert share >= MIN_SOURCED, final.answer


@pytest.mark.timeout(1200)
async def test_an_english_question_that_asks_no_list_is_answered_by_the_model(
    demo: tuple[Archive, Index], tmp_path: Path
) -> None:
    archive, index = demo
    final = await ask(archive, index, "When did the reservoir flood the valley?", tmp_path)
    assert not final.composed and final.stop == "end_turn"
    assert "\n\nSources:\n" in final.answer and final.usage.get("output_tokens", 0) > 0
