"""The demo archive: counts, links, access flags, transcriptions, media, atomic first-run build."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.archive import Archive, RecordKey, open_archive
from app.core.archive import demo as demo_module
from app.core.archive.demo import create_demo_archive, demo_source_dir, ensure_demo_archive
from app.core.archive.media import media_of
from app.core.archive.records import locators
from app.core.errors import ArchiveError

TIMECODE = re.compile(r"\[TC_(\d\d):(\d\d):(\d\d)\.(\d\d\d)_TC\]")
LANGS = ("lg-cat", "lg-spa", "lg-eng")


@pytest.fixture(scope="module")
def demo(demo_archive_dir: Path) -> Iterator[Archive]:
    """The shared demo archive, opened read-only so no test can change it."""
    archive = open_archive(demo_archive_dir, read_only=True)
    yield archive
    archive.close()


@pytest.fixture(scope="module")
def queries() -> dict[str, object]:
    """The evaluation lists shipped beside the demo sources."""
    data: dict[str, object] = json.loads((demo_source_dir() / "queries.json").read_text("utf-8"))
    return data


def _keys(group: object) -> list[RecordKey]:
    assert isinstance(group, dict)
    return [RecordKey.parse(k) for keys in group.values() for k in keys]


def _transcription(archive: Archive, key: RecordKey) -> tuple[str, str]:
    items = archive.get_record(key).items("oh25")
    assert len(items) == 1, key
    return str(items[0]["lang"]), str(items[0]["value"])


# -- contents -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("tipo", "minimum"),
    [
        ("oh1", 40),
        ("rsc197", 60),
        ("tp1", 30),
        ("numisdata4", 40),
        ("numisdata6", 8),
        ("rsc170", 5),
    ],
)
def test_section_counts(demo: Archive, tipo: str, minimum: int) -> None:
    assert demo.count_records(tipo) >= minimum


def test_access_flags(demo: Archive) -> None:
    flags = {s.tipo: (s.restricted, s.writable) for s in demo.sections()}
    assert flags["oh1"][0] is True
    assert flags["numisdata4"] == (False, True)
    assert flags["numisdata6"] == (False, True)
    assert flags["rsc197"][1] and flags["tp1"][1]
    assert flags["rsc170"][1] is False
    assert demo.is_restricted(RecordKey("oh1", 1))
    assert not demo.is_restricted(RecordKey("numisdata4", 1))


def test_every_relation_resolves_to_its_target_section(demo: Archive) -> None:
    relation_fields = {f.tipo: f for f in demo.fields() if f.kind == "relation"}
    checked = 0
    for record in demo.iter_records():
        for field_tipo, items in record.values.items():
            spec = relation_fields.get(field_tipo)
            if spec is None:
                continue
            for target in locators(items):
                assert target.section_tipo == spec.target_section, (record.key, field_tipo)
                assert demo.find_record(target) is not None, (record.key, field_tipo, target)
                checked += 1
    assert checked > 300


def test_links_table_mirrors_relations_both_ways(demo: Archive) -> None:
    relation_fields = {f.tipo for f in demo.fields() if f.kind == "relation"}
    for record in demo.iter_records():
        expected = {
            (field_tipo, target)
            for field_tipo, items in record.values.items()
            if field_tipo in relation_fields
            for target in locators(items)
        }
        links = demo.links_from(record.key)
        assert {(link.field_tipo, link.target) for link in links} == expected
        for link in links:
            assert link in demo.links_to(link.target)


def test_people_places_and_labels_are_cross_linked(demo: Archive) -> None:
    finder = RecordKey("rsc197", 58)
    sources = {link.source.section_tipo for link in demo.links_to(finder)}
    assert {"numisdata4", "rsc170"} <= sources
    assert demo.record_label(RecordKey("rsc197", 6)) == "Rosa Vilaseca i Pujol"
    assert demo.record_label(RecordKey("tp1", 28), "lg-spa") == "Zaragoza"
    assert demo.record_label(RecordKey("tp1", 28), "lg-cat") == "Saragossa"
    for key in (RecordKey("oh1", 1), RecordKey("numisdata4", 1), RecordKey("rsc170", 1)):
        assert demo.record_label(key) != str(key)


def test_every_person_has_birth_data_and_coherent_dates(demo: Archive) -> None:
    for person in demo.iter_records("rsc197"):
        born = person.text("rsc89")
        assert born and person.items("rsc90"), person.key
        died = person.text("rsc91")
        assert died is None or died > born, person.key


def test_interviews_are_coherent_with_their_people(demo: Archive) -> None:
    for interview in demo.iter_records("oh1"):
        date = interview.text("oh29") or ""
        assert "1985" <= date[:4] <= "2020", interview.key
        (informant,) = locators(interview.items("oh24"))
        assert locators(interview.items("oh27")) and locators(interview.items("oh30"))
        person = demo.get_record(informant)
        born = person.text("rsc89") or ""
        assert "1915" <= born[:4] <= "1960", informant
        died = person.text("rsc91")
        assert died is None or died > date, (interview.key, informant)
        assert len(interview.items("oh16")) >= 2, interview.key
        assert len(interview.items("oh23")) >= 2, interview.key


def test_interviewers_recur(demo: Archive) -> None:
    interviewers = [locators(r.items("oh27"))[0] for r in demo.iter_records("oh1")]
    assert len(set(interviewers)) <= 6
    assert all(interviewers.count(k) >= 5 for k in set(interviewers))


def test_transcriptions_carry_ordered_timecodes_in_the_interview_language(demo: Archive) -> None:
    for interview in demo.iter_records("oh1"):
        lang, text = _transcription(demo, interview.key)
        assert lang == interview.text("oh31") and lang in LANGS, interview.key
        stamps = [tuple(map(int, m)) for m in TIMECODE.findall(text)]
        assert 3 <= len(stamps) <= 8, interview.key
        assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps), interview.key
        assert text.startswith("[TC_"), interview.key


def test_coins_link_to_mints_and_describe_both_faces(demo: Archive) -> None:
    mints = set()
    for coin in demo.iter_records("numisdata4"):
        (mint,) = locators(coin.items("numisdata30"))
        mints.add(mint)
        for face in ("numisdata37", "numisdata38"):
            assert {i["lang"] for i in coin.items(face)} == set(LANGS), (coin.key, face)
        assert float(coin.text("numisdata33") or 0) > 0
        assert int(coin.text("numisdata35") or 0) <= int(coin.text("numisdata36") or 0)
    assert len(mints) >= 8


def test_places_have_coordinates(demo: Archive) -> None:
    for place in demo.iter_records("tp1"):
        (geo,) = place.items("tp4")
        assert -90 <= geo["value"]["lat"] <= 90 and -180 <= geo["value"]["lon"] <= 180
        assert place.items("tp3"), place.key


def test_images_have_media_with_dimensions_and_thumbnails(demo: Archive) -> None:
    for image in demo.iter_records("rsc170"):
        (media,) = media_of(demo, image.key)
        assert media.mime.startswith("image/") and media.field_tipo == "rsc29"
        assert media.width and media.height and media.width > 100 and media.height > 100
        assert (demo.media_dir / media.path).is_file()
        assert media.thumbnail and (demo.media_dir / media.thumbnail).is_file()
        assert image.items("rsc26") and image.items("rsc24"), image.key


def test_meta_records_the_demo_version(demo: Archive) -> None:
    assert demo.meta("demo_version")
    assert demo.meta("name")


# -- the evaluation lists -------------------------------------------------------------------------
def test_displacement_interviews_exist_in_every_language(
    demo: Archive, queries: dict[str, object]
) -> None:
    displacement = queries["displacement"]
    assert isinstance(displacement, dict) and set(displacement) == set(LANGS)
    texts = []
    for lang, keys in displacement.items():
        assert len(keys) >= 2, lang
        for key in keys:
            text_lang, text = _transcription(demo, RecordKey.parse(key))
            assert text_lang == lang, key
            texts.append(text.lower())
    joined = " ".join(texts)
    phrases = ("el pantà", "el pantano", "when the water came", "ens van fer marxar")
    for phrase in (*phrases, "nos echaron", "we had to leave"):
        assert phrase in joined, phrase


def test_reservoir_mentions_are_separate_from_displacement(
    demo: Archive, queries: dict[str, object]
) -> None:
    displacement = set(_keys(queries["displacement"]))
    mentions = _keys(queries["reservoir_mention_only"])
    assert len(mentions) >= 4 and not displacement & set(mentions)
    reservoir = re.compile(r"pantà|pantano|reservoir|presa|\bdam\b", re.IGNORECASE)
    for key in mentions:
        _, text = _transcription(demo, key)
        assert reservoir.search(text), key
        assert not re.search(r"ens van fer marxar|nos echaron|had to leave", text), key


# -- first run: ensure / create -------------------------------------------------------------------
def _leftovers(parent: Path) -> list[Path]:
    return [p for p in parent.iterdir() if demo_module.STAGING_MARK in p.name]


def test_ensure_builds_once_then_opens(tmp_path: Path) -> None:
    folder = tmp_path / "archives" / "demo"
    first = ensure_demo_archive(folder)
    counts = {s.tipo: first.count_records(s.tipo) for s in first.sections()}
    first.set_meta("marker", "kept")
    first.close()
    second = ensure_demo_archive(folder)
    try:
        assert second.meta("marker") == "kept"
        assert {s.tipo: second.count_records(s.tipo) for s in second.sections()} == counts
    finally:
        second.close()
    assert _leftovers(folder.parent) == []


def test_default_home_gets_the_demo(arxiu_home: Path) -> None:
    from app.core import paths

    archive = ensure_demo_archive(paths.default_archive_dir())
    try:
        assert archive.folder.is_relative_to(arxiu_home)
        assert archive.count_records("oh1") >= 40
    finally:
        archive.close()


def test_crash_mid_build_leaves_no_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "demo"

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated crash while adding media")

    monkeypatch.setattr(demo_module, "add_media", boom)
    with pytest.raises(RuntimeError):
        ensure_demo_archive(folder)
    assert not (folder / "archive.db").exists()
    assert _leftovers(tmp_path) == []
    monkeypatch.undo()
    archive = ensure_demo_archive(folder)
    try:
        assert archive.count_records("rsc170") >= 5
        assert media_of(archive, RecordKey("rsc170", 1))
    finally:
        archive.close()


def test_half_built_leftover_is_ignored_and_swept(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    leftover = tmp_path / f".demo{demo_module.STAGING_MARK}999-dead"
    open_archive(leftover, create=True).close()  # a build killed before it finished
    old = time.time() - 2 * demo_module.STALE_STAGING_S
    os.utime(leftover, (old, old))
    archive = ensure_demo_archive(folder)
    try:
        assert archive.count_records("oh1") >= 40
    finally:
        archive.close()
    assert not leftover.exists()


def test_create_refuses_an_existing_archive(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    open_archive(folder, create=True).close()
    with pytest.raises(ArchiveError) as info:
        create_demo_archive(folder)
    assert info.value.code == "archive.exists"


def test_a_non_empty_folder_is_left_untouched(tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ArchiveError) as info:
        ensure_demo_archive(folder)
    assert info.value.code == "archive.folder_not_empty"
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
    assert _leftovers(tmp_path) == []


def test_an_empty_folder_becomes_the_demo(tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    archive = ensure_demo_archive(folder)
    try:
        assert archive.count_records("numisdata4") >= 40
    finally:
        archive.close()


def test_a_dangling_reference_in_the_sources_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "src"
    shutil.copytree(demo_source_dir(), source)
    path = source / "records" / "oh1.json"
    data = json.loads(path.read_text("utf-8"))
    data["records"][0]["oh24"] = "rsc197/9999"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ArchiveError) as info:
        create_demo_archive(tmp_path / "demo", source=source)
    assert info.value.code == "archive.demo_invalid" and "rsc197/9999" in info.value.message
    assert not (tmp_path / "demo").exists() and _leftovers(tmp_path) == []


def test_missing_sources_give_a_coded_error(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError) as info:
        create_demo_archive(tmp_path / "demo", source=tmp_path / "nowhere")
    assert info.value.code == "archive.demo_missing"
