"""Answers the core composes: when, in which language, which records, and how they read."""

from __future__ import annotations

import pytest

from app.core.agent.answer_language import composition
from app.core.agent.answer_phrases import PHRASES, phrases
from app.core.agent.citations import find_citations
from app.core.agent.composed_answer import composed_text, lead_sections, list_call
from app.core.agent.composed_records import ListedRecord
from app.core.agent.events import FinalEvent, ToolUseEvent
from app.core.agent.list_questions import list_noun, noun_language
from app.core.agent.relevance_cut import CUT, FLOOR_K, LIST_K, floor_score, relevant_hits
from app.core.agent.request import ChatRequest
from app.core.agent.sources import SourceHit
from app.core.archive import Archive, RecordKey
from app.core.models.catalog import Catalog, builtin_local
from app.core.models.scripted import ScriptedModel, Turn
from app.core.tools.base import ToolResult
from app.core.tools.registry import ToolRegistry
from tests.core.agent.conftest import RecordingSearcher, collect, entry, session_factory

CATALAN = "Qui va haver de marxar de Sant Romà quan el pantà va negar la vall?"


@pytest.mark.parametrize(
    ("question", "noun"),
    [
        (
            "Quines entrevistes parlen de les famílies que van haver de marxar pel pantà?",
            "entrevistes",
        ),
        ("¿Qué entrevistas hablan de las familias que tuvieron que irse?", "entrevistas"),
        ("Which interviews talk about the families who had to leave?", "interviews"),
        ("Quins documents parlen de la presa?", "documents"),
        ("What records mention the mill?", "records"),
        ("Which of the interviews mention Vic?", "interviews"),
        ("¿Cuáles registros hablan del molino?", "registros"),
        ("What do the interviews say about the mill?", None),
        ("I quina d'aquestes entrevistes és la més antiga?", None),
        ("Which interview is the oldest?", None),
        ("les famílies que van marxar quan van fer el pantà", None),
        ("When was the dam finished?", None),
    ],
)
def test_list_questions_and_their_noun(question: str, noun: str | None) -> None:
    assert list_noun(question) == noun


def test_when_the_core_composes() -> None:
    bundled = builtin_local()
    english_list = "Which interviews talk about the reservoir?"
    assert composition(bundled, CATALAN, "read", "lg-eng") == composition(
        bundled, CATALAN, "read", "lg-cat"
    )
    made = composition(bundled, CATALAN, "read", "lg-eng")
    assert made is not None and (made.lang, made.noun, made.reason) == ("lg-cat", None, "language")
    spanish = composition(bundled, "¿Qué entrevistas hablan del embalse?", "read", "lg-eng")
    assert spanish is not None and (spanish.lang, spanish.noun) == ("lg-spa", "entrevistas")
    listed = composition(bundled, english_list, "read", "lg-cat")
    assert listed is not None and (listed.lang, listed.reason) == ("lg-eng", "list")
    assert composition(bundled, "When was the dam of Sant Romà finished?", "read", "lg-eng") is None
    assert composition(bundled, CATALAN, "write", "lg-eng") is None  # the model plans the change
    hosted = entry("cloud", "external")
    assert composition(hosted, CATALAN, "read", "lg-eng") is None
    assert composition(hosted, english_list, "read", "lg-eng") is None  # not the bundled model
    said = entry("small", languages=("en", "ca"))
    assert composition(said, CATALAN, "read", "lg-eng") is None
    made = composition(said, "¿Quién tuvo que irse cuando el embalse inundó el valle?", "read", "x")
    assert made is not None and made.lang == "lg-spa"
    # too short to tell: the UI's language decides
    short = composition(bundled, "Sant Romà?", "read", "lg-cat")
    assert short is not None and short.lang == "lg-cat"
    assert composition(bundled, "Sant Romà?", "read", "lg-eng") is None


def hit(key: str, score: float, **extra: str) -> SourceHit:
    tipo, sid = key.split("/")
    return SourceHit(tipo, int(sid), label=f"Label {key}", snippet="…", score=score, **extra)


def test_the_cut_rises_from_the_searchs_own_floor() -> None:
    strong = [hit(f"oh1/{n}", 1.0 - n * 0.05) for n in range(1, 5)]  # 0.95 … 0.80
    weak = [hit(f"oh1/{n}", 0.30) for n in range(10, 20)]  # unrelated: the floor
    hits = [*weak[:3], *strong, *weak[3:]]
    assert floor_score([h.score for h in hits]) == 0.30
    edge = 0.30 + CUT * (0.95 - 0.30)
    kept = relevant_hits([*hits, hit("oh1/5", edge), hit("oh1/6", edge - 0.001)])
    assert [str(h.section_id) for h in kept] == ["1", "2", "3", "4", "5"]  # rank order
    # few hits: no floor known, the plain share of the best
    few = [hit("oh1/1", 1.0), hit("oh1/2", CUT), hit("oh1/3", CUT / 2)]
    assert [h.section_id for h in relevant_hits(few)] == [1, 2]
    flat = [hit(f"oh1/{n}", 0.5) for n in range(12)]
    assert len(relevant_hits(flat)) == 12 and relevant_hits([]) == []


def test_a_topic_with_more_records_than_a_list_holds_is_not_its_own_floor() -> None:
    """20 records on the topic (0.95 → 0.76), 30 unrelated (0.30): the list search asks for
    FLOOR_K records, so its median is an unrelated one and all 20 are listed; the first 30
    alone (20 on the topic) would make a record on the topic the floor and list 13."""
    topic = [hit(f"ead1/{n}", 0.95 - n * 0.01) for n in range(20)]
    unrelated = [hit(f"ead1/{n}", 0.30) for n in range(100, 130)]
    hits = [*topic, *unrelated]
    assert list_call("strikes?", ["ead1"]).arguments["k"] == FLOOR_K == len(hits) == 50
    assert relevant_hits(hits) == topic
    assert len(relevant_hits(hits[:LIST_K])) == 13


def test_lead_sections_are_those_of_the_strong_records() -> None:
    def result(*pairs: tuple[str, float]) -> ToolResult:
        data = [
            {"section_tipo": k.split("/")[0], "section_id": int(k.split("/")[1]), "score": s}
            for k, s in pairs
        ]
        return ToolResult(ok=True, data={"hits": data})  # type: ignore[dict-item]

    assert lead_sections(result(("oh1/7", 1.0), ("tp1/4", 0.85), ("oh1/2", 0.9))) == ["oh1"]
    assert lead_sections(result(("tp1/4", 1.0), ("oh1/2", 0.95))) == ["tp1", "oh1"]
    where_most_are = result(("agent1/87", 1.0), ("ead1/5", 0.85), ("ead1/6", 0.8))
    assert lead_sections(where_most_are) == ["agent1", "ead1"]
    assert lead_sections(ToolResult(ok=False, code="index.unavailable", message="x")) == []


def listed(key: str, label: str, **extra: object) -> ListedRecord:
    tipo, sid = key.split("/")
    base: dict[str, object] = {
        "section_label": "Història oral" if tipo == "oh1" else "Llocs",
        "date": None,
        "langs": (),
        "passage": "",
    }
    base.update(extra)
    return ListedRecord(RecordKey(tipo, int(sid)), label, **base)  # type: ignore[arg-type]


def test_a_composed_answer_lists_every_record_by_section_with_links() -> None:
    records = [
        listed(
            "oh1/4",
            "Ens van fer fora *de la vall*",
            date="1992-11-10",
            langs=("lg-spa",),
            passage="Dolores  Giménez\ncuenta su llegada",
            timecode="00:00:11.000",
        ),
        listed("tp1/4", "Pantà de Sant Romà", passage="El pantà", page="3"),
        listed(
            "oh1/2",
            "El pantà es va menjar el poble",
            langs=("lg-cat",),
            passage="El pantà es va menjar el poble",
        ),
    ]
    text = composed_text(records, phrases("lg-cat"), "entrevistes")
    assert text.splitlines() == [
        "He trobat 3 entrevistes que en parlen:",
        "",
        "**Història oral** (2)",
        "",
        "- **Ens van fer fora de la vall** (oh1/4 @00:00:11) · 1992-11-10 · castellà: "
        "«Dolores Giménez cuenta su llegada»",
        "- **El pantà es va menjar el poble** (oh1/2) · català",  # its title was the passage
        "",
        "**Llocs** (1)",
        "",
        "- **Pantà de Sant Romà** (tp1/4) · pàgina 3: «El pantà»",
    ]
    cited = find_citations(text)
    assert [str(c.key) for c in cited] == ["oh1/4", "oh1/2", "tp1/4"]
    assert cited[0].timecode == "00:00:11" and cited[0].written == "Ens van fer fora de la vall"
    assert composed_text([], phrases("lg-spa"), "entrevistas") == PHRASES["lg-spa"].nothing
    one = composed_text(records[:1], phrases("lg-eng"), "interviews")
    assert one.startswith("I found one record about it:\n\n**Història oral** (1)\n")
    assert phrases("lg-fra") is PHRASES["lg-eng"]


async def test_a_catalan_question_to_an_english_model_is_composed_without_the_model(
    oh_archive: Archive, registry: ToolRegistry, searcher: RecordingSearcher
) -> None:
    models = {
        "local": ScriptedModel(id="local"),
        "small": ScriptedModel(id="small", supports_tools=False),
    }
    catalog = Catalog(
        (entry("local", default=True), entry("small", supports_tools=False, languages=("en",)))
    )
    make = session_factory(oh_archive, catalog, models, registry, searcher)
    events = await collect(
        await make().chat(ChatRequest.from_dict({"question": CATALAN, "model": "small"}))
    )
    final = events[-1]
    assert isinstance(final, FinalEvent) and final.composed and final.stop == "end_turn"
    assert models["small"].calls == []  # no prose from a model that cannot write Catalan
    assert [e.name for e in events if isinstance(e, ToolUseEvent)] == ["dedalo_semantic_search"] * 2
    assert final.answer.startswith("He trobat ")
    verified = {str(c.key) for c in final.citations if c.verified}
    assert "oh1/1" in verified and all(c.verified for c in final.citations)
    assert "**Interview with Joan Vila** (oh1/1)" in final.answer
    assert {"composed": "language", "lang": "lg-cat", "turn": 0} in final.transcript_summary
    wire = final.to_dict()
    assert wire["composed"] is True and FinalEvent.from_dict(wire).composed

    models["small"].extend(Turn(text="Joan left (oh1/1)."))
    english = "Who had to leave when the reservoir flooded the valley?"
    events = await collect(
        await make().chat(ChatRequest.from_dict({"question": english, "model": "small"}))
    )
    final = events[-1]
    assert isinstance(final, FinalEvent) and not final.composed
    assert final.answer.startswith("Joan left (oh1/1).") and "composed" not in final.to_dict()
    assert len(models["small"].calls) == 1


@pytest.mark.parametrize(
    ("noun", "lang"),
    [
        ("entrevistes", "lg-cat"),
        ("entrevistas", "lg-spa"),
        ("interviews", "lg-eng"),
        ("documents", None),  # Catalan and English
        ("fotos", None),  # Catalan and Spanish
        (None, None),
    ],
)
def test_a_nouns_language_when_it_is_one_languages(noun: str | None, lang: str | None) -> None:
    assert noun_language(noun) == lang


def test_a_catalan_list_question_with_english_terms_is_answered_in_catalan() -> None:
    """ "Quines entrevistes parlen de Chemical Warfare?": its words do not tell the language
    (two of five are English); its noun does, so an English interface does not make the answer
    "I found 5 entrevistes"."""
    question = "Quines entrevistes parlen de Chemical Warfare?"
    composed = composition(entry("m", languages=("de",)), question, "read", "lg-eng")
    assert composed is not None and (composed.lang, composed.noun) == ("lg-cat", "entrevistes")
    spanish = composition(entry("m", languages=("de",)), "¿Cuáles documentos?", "read", "lg-cat")
    assert spanish is not None and spanish.lang == "lg-spa"
