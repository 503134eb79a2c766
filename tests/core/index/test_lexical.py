"""The lexical search's query words: what an apostrophe cuts off is no word; an initial is."""

from __future__ import annotations

from app.core.archive import Archive
from app.core.importing import import_dataset
from app.core.index import HashingEmbedder
from app.core.index.lexical import terms
from app.core.index.opening import open_index
from tests.conftest import shared_data

HANFORD = "En quin moment de l'entrevista de Hanford parla de DuPont?"


def test_an_elided_article_is_no_query_word() -> None:
    assert terms(HANFORD, "lg-cat") == ["moment", "entrevista", "hanford", "parla", "dupont"]
    assert terms("qu'il a écrit l'abbé") == ["il", "écrit", "abbé"]
    assert terms("Box 3 d'Olot", "lg-cat") == ["box", "3", "olot"]
    assert terms("Charles P. Smyth's letters porta'ls") == [
        "charles",
        "p",
        "smyth",
        "letters",
        "porta",
    ]
    assert terms("l'") == ["l"]  # the query's only word is kept


def test_a_catalan_question_lists_no_name_by_its_initial(archive: Archive) -> None:
    """The OHMS set's subjects include "Loomis, Alfred L.": the question's ``l'`` matched
    it, and eleven such names were listed before the interview."""
    import_dataset(archive, "ohms", shared_data("oral-history-ohms"))
    index = open_index(archive, HashingEmbedder())  # both engines read the words alike
    try:
        hits = index.search(HANFORD, k=50, mode="lexical", lang="lg-cat")
    finally:
        index.close()
    labels = [archive.label_of(archive.get_record(hit.key)) for hit in hits]

    assert "Oral history interview with William E. Hanford" in labels
    assert not [label for label in labels if label.endswith(" L.")], labels
