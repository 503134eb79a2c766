"""Which passage of a hit is worth quoting beside its record's title."""

from __future__ import annotations

from app.core.index.hit_passages import worth_quoting

HEADING = ["DuPont (E.I. du Pont de Nemours & Co.)"]
QUERY = "En quin moment de l'entrevista de Hanford parla de DuPont?"
WORDS = ["moment", "entrevista", "hanford", "parla", "dupont"]


def test_a_bare_code_or_the_title_again_is_not_quoted() -> None:
    assert not worth_quoting("subject", "lg-nolan", HEADING, WORDS, QUERY)
    assert not worth_quoting(HEADING[0], "lg-eng", HEADING, WORDS, QUERY)


def test_a_passage_or_a_short_text_with_a_new_query_word_is_quoted() -> None:
    said = "It was Holmes who got you to DuPont? HANFORD: Yes. I was offered a job at Rohm"
    assert worth_quoting(said, "lg-eng", ["Oral history interview with Roy Plunkett"], WORDS, QUERY)
    assert worth_quoting("Hanford, William E.", "lg-eng", HEADING, WORDS, QUERY)
