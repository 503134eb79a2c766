"""A record of a hierarchy carries the titles above it in its chunks: on a real finding aid, kept
when a title above changes, never copied from a restricted record into an open one, and ending
on a cycle."""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from app.core.archive import Archive, RecordKey
from app.core.archive.importers import run_import
from app.core.archive.importers.base import external_keys
from app.core.importing import import_dataset
from app.core.index.chunk_context import ELIDED, SEPARATOR, TRAIL_WORDS, trail_text
from app.core.index.indexer import sync_chunks
from tests.conftest import shared_data

VITET = ("ead", "anf", "FRAN_IR_003500.xml")
PART_OF, TITLE = "ead18", "ead2"


def _titles_above(component: str) -> list[str]:
    """The titles of the fonds and components above ``component``, read from the XML."""
    tree = etree.parse(str(shared_data(*VITET)))
    found = tree.xpath(f"//c[@id='{component}']")
    assert isinstance(found, list) and isinstance(found[0], etree._Element)
    titles = []
    for above in found[0].iterancestors("c", "archdesc"):
        titles.append(" ".join(str(above.findtext("did/unittitle")).split()))
    return titles[::-1]


def _chunks(archive: Archive, key: RecordKey) -> list[tuple[str, str, str]]:
    """``(field, label, text)`` of each chunk of ``key``, in order."""
    with archive.db.reading() as conn:
        rows = conn.execute(
            "SELECT field_tipo, label, text FROM index_chunks WHERE section_tipo = ? "
            "AND section_id = ? ORDER BY position",
            (key.section_tipo, key.section_id),
        ).fetchall()
    return [(str(r[0]), str(r[1]), str(r[2])) for r in rows]


def _pending(archive: Archive) -> int:
    """Records not chunked at their current version (either engine)."""
    with archive.db.reading() as conn:
        row = conn.execute(
            "SELECT count(*) FROM records r LEFT JOIN index_records i ON i.section_tipo = "
            "r.section_tipo AND i.section_id = r.section_id "
            "WHERE i.version IS NULL OR i.version != r.version"
        ).fetchone()
    return int(row[0])


def _vitet(archive: Archive) -> dict[str, RecordKey]:
    run_import(archive, "ead", shared_data(*VITET))
    sync_chunks(archive)
    return {
        ext.partition("#")[2] or "fonds": key for ext, key in external_keys(archive, "ead").items()
    }


def test_a_file_is_found_by_the_titles_of_the_fonds_and_series_above_it(archive: Archive) -> None:
    keys = _vitet(archive)
    above = _titles_above("d_1_2_1")
    assert above[0] == "Fonds Vitet" and len(above) == 3

    chunks = _chunks(archive, keys["d_1_2_1"])
    label = archive.record_label(keys["d_1_2_1"])

    trails = [text for _, _, text in chunks if text.startswith(above[0])]
    assert len(trails) == 1 and trails[0].startswith(SEPARATOR.join(above))
    assert all(own == "" or own == label for _, own, _ in chunks)  # the hit keeps its own label
    assert _chunks(archive, keys["fonds"])[0][2].split(" · ")[0] != "Fonds Vitet"  # no trail
    assert _pending(archive) == 0


def test_a_series_renamed_carries_its_new_title_to_everything_under_it(archive: Archive) -> None:
    keys = _vitet(archive)
    series, leaf = keys["d_1_2"], keys["d_1_2_1"]
    old = _titles_above("d_1_2_1")[-1]
    unrelated = _chunks(archive, keys["d_2"])

    archive.update_record(
        series, {TITLE: [{"lang": "lg-fra", "value": "Lettres écrites par Vitet"}]}
    )
    sync_chunks(archive)

    texts = " ".join(text for _, _, text in _chunks(archive, leaf))
    assert "Fonds Vitet" in texts and "Lettres écrites par Vitet" in texts and old not in texts
    assert _chunks(archive, keys["d_2"]) == unrelated
    assert _pending(archive) == 0


def test_a_series_renamed_in_a_new_export_is_carried_on_re_import(
    tmp_path: Path, archive: Archive
) -> None:
    """The finding aid exported again with one series renamed: the re-import rewrites the
    series alone, and the files under it are chunked again with its new title."""
    keys = _vitet(archive)
    source = shared_data(*VITET).read_text(encoding="utf-8")
    renamed = source.replace(
        "<unittitle>Correspondance active</unittitle>",
        "<unittitle>Lettres envoyées par Vitet</unittitle>",
        1,
    )
    assert renamed != source
    export = tmp_path / VITET[-1]
    export.write_text(renamed, encoding="utf-8")

    summary = import_dataset(archive, "ead", export)

    assert summary.updated >= 1 and summary.created == 0
    texts = " ".join(text for _, _, text in _chunks(archive, keys["d_1_2_1"]))
    assert "Lettres envoyées par Vitet" in texts and "Correspondance active" not in texts
    assert _pending(archive) == 0


def test_a_restricted_record_lends_its_title_only_to_restricted_records(archive: Archive) -> None:
    keys = _vitet(archive)
    part_of = [{"value": {"section_tipo": "ead1", "section_id": keys["fonds"].section_id}}]
    closed = archive.create_record(
        "ead1",
        {TITLE: [{"lang": "lg-fra", "value": "Dossier médical confidentiel"}], PART_OF: part_of},
        restricted=True,
    )
    inside = [{"value": {"section_tipo": "ead1", "section_id": closed.section_id}}]
    leaf = archive.create_record(
        "ead1",
        {
            TITLE: [{"lang": "lg-fra", "value": "Ordonnances"}],
            "ead6": [{"value": "1870"}],
            PART_OF: inside,
        },
        restricted=False,
    )
    closed_leaf = archive.create_record(
        "ead1",
        {TITLE: [{"lang": "lg-fra", "value": "Certificats"}], PART_OF: inside},
        restricted=True,
    )
    sync_chunks(archive)

    texts = " ".join(text for _, _, text in _chunks(archive, leaf))
    assert texts and "confidentiel" not in texts and "Fonds Vitet" not in texts
    closed_texts = [text for _, _, text in _chunks(archive, closed_leaf)]
    assert any(t.startswith("Fonds Vitet › Dossier médical confidentiel") for t in closed_texts)


def test_a_cycle_in_part_of_ends(archive: Archive) -> None:
    keys = _vitet(archive)
    series, leaf = keys["d_1_2"], keys["d_1_2_1"]
    archive.update_record(
        series,
        {PART_OF: [{"value": {"section_tipo": "ead1", "section_id": leaf.section_id}}]},
    )

    sync_chunks(archive)

    assert _pending(archive) == 0
    leaf_title = archive.get_record(leaf).text(TITLE, "lg-fra")
    assert leaf_title and any(
        text.startswith(leaf_title) for _, _, text in _chunks(archive, series)
    )


def test_a_long_trail_keeps_its_top_and_the_nearest_levels() -> None:
    titles = ["Fonds Vitet"] + [f"Series {n} " + "word " * 9 for n in range(1, 8)]
    titles = [" ".join(t.split()) for t in titles]

    trail = trail_text(titles)

    parts = trail.split(SEPARATOR)
    assert parts[0] == "Fonds Vitet" and parts[1] == ELIDED and parts[-1] == titles[-1]
    assert len(trail.split()) <= TRAIL_WORDS + len(parts) + 1
    assert trail_text(titles[:2]) == SEPARATOR.join(titles[:2])
