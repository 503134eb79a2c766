"""Question frames ("Quines entrevistes parlen de…") are stripped before a query is searched."""

from __future__ import annotations

import pytest

from app.core.index import Index
from app.core.index.query_frame import strip

from .conftest import CountingEmbedder


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        (
            "Quines entrevistes parlen de les famílies que van haver de marxar pel pantà?",
            "les famílies que van haver de marxar pel pantà",
        ),
        ("Quines entrevistes parlen del pantà", "pantà"),
        ("Quina entrevista parla de l'escola?", "l'escola"),
        ("Quines entrevistes parlen d'en Pau Casals", "en Pau Casals"),
        ("Hi ha documents sobre la construcció del pantà?", "la construcció del pantà"),
        ("Busca'm entrevistes sobre la fàbrica tèxtil", "la fàbrica tèxtil"),
        ("Entrevistes sobre el pantà de Sant Romà", "el pantà de Sant Romà"),
    ],
)
def test_catalan_frames_are_stripped(query: str, topic: str) -> None:
    assert strip(query) == topic


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        (
            "¿Qué entrevistas hablan de las familias que tuvieron que irse por el pantano?",
            "las familias que tuvieron que irse por el pantano",
        ),
        ("¿Hay algún documento sobre la guerra civil?", "la guerra civil"),
        ("Qué documentos tratan de la sequía de 2008", "la sequía de 2008"),
        ("¿Hay entrevistas sobre la mina?", "la mina"),
        ("Entrevistas acerca de la colonia textil", "la colonia textil"),
    ],
)
def test_spanish_frames_are_stripped(query: str, topic: str) -> None:
    assert strip(query) == topic


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        (
            "Which interviews talk about the families who had to leave because of the reservoir?",
            "the families who had to leave because of the reservoir",
        ),
        ("Are there any records about the mill strike?", "the mill strike"),
        ("Which interviews mention the dam", "the dam"),
        ("Find me interviews on the civil war", "the civil war"),
        ("Show me documents that describe the flood", "the flood"),
        ("Interviews about the dam", "the dam"),
    ],
)
def test_english_frames_are_stripped(query: str, topic: str) -> None:
    assert strip(query) == topic


@pytest.mark.parametrize(
    "query",
    [
        "famílies que van marxar quan van fer el pantà",
        "records dels veïns desallotjats de la vall",  # "records" is Catalan for memories
        "documents de l'arxiu comarcal",  # a kind alone, with no link, is the topic
        "give me all the records of Elvis Presley",  # "records of" names the topic
        "Which coins of Athens show an owl?",  # coins are a topic, not a kind of record
        "Szechwan dish food cuisine",
        "interviews",
    ],
)
def test_queries_without_a_frame_are_kept(query: str) -> None:
    assert strip(query) == query


@pytest.mark.parametrize("query", ["Quines entrevistes?", "Which interviews talk about?"])
def test_a_frame_with_no_topic_is_kept_whole(query: str) -> None:
    assert strip(query) == query


def test_search_embeds_the_topic_not_the_frame(index: Index, embedder: CountingEmbedder) -> None:
    hits = index.search("Which interviews talk about the reservoir flooding the village?")
    assert embedder.texts[-1] == "the reservoir flooding the village"
    assert hits and hits[0].snippet
