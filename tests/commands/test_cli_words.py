"""The CLI speaks the UI's language (``ARXIU_LANG``, else the settings' ``language``, else the
system's): headings and counts of ``search``, ``ask``, ``archive info``, ``records`` and
``index`` in Catalan, Spanish and English; ``--json`` prints the same in all three."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.cli import main
from app.commands.ask_citations import citation_lines, claim_lines
from app.commands.cli_words import error_lines, number, said, score, seconds
from app.core.agent.citations import Citation
from app.core.agent.claims import Claim
from app.core.agent.events import ErrorEvent
from app.core.archive import Field, Section, open_archive
from app.core.archive.exporters.base import require_section
from app.core.errors import ArxiuError
from app.core.i18n_tables import load_table
from app.core.phrases import DECIMAL, THOUSANDS

LANGS = ["ca", "es", "en"]
HEADINGS = {
    "ca": ("registres per a «pantà»", "Cites:", "Arxiu  ", "Enllaçat des de"),
    "es": ("registros para «pantà»", "Citas:", "Archivo  ", "Enlazado desde"),
    "en": ('records for "pantà"', "Citations:", "Archive  ", "Linked from"),
}


@pytest.fixture(scope="module")
def demo(demo_archive_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo archive with its hashing index built."""
    folder = tmp_path_factory.mktemp("words") / "demo"
    shutil.copytree(demo_archive_dir, folder)
    assert main(["index", "--archive", str(folder), "--model", "hashing"]) == 0
    return folder


def _out(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


@pytest.fixture
def lang(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    chosen = str(request.param)
    monkeypatch.setenv("ARXIU_LANG", chosen)
    return chosen


@pytest.mark.parametrize("lang", LANGS, indirect=True)
def test_search_archive_and_records_headings_follow_the_language(
    demo: Path, capsys: pytest.CaptureFixture[str], lang: str
) -> None:
    search, _citations, archive, linked = HEADINGS[lang]
    out = _out(capsys, "search", "pantà", "--archive", str(demo), "--model", "hashing")
    assert out.splitlines()[0].endswith(search), out.splitlines()[0]
    info = _out(capsys, "archive", "info", "--archive", str(demo))
    assert info.startswith(archive)
    shown = _out(capsys, "records", "show", "rsc197", "1", "--archive", str(demo))
    assert f"\n{linked}\n" in shown
    listing = _out(capsys, "records", "list", "oh1", "--archive", str(demo), "--limit", "2")
    word = {"ca": "registres", "es": "registros", "en": "records"}[lang]
    assert listing.splitlines()[0].endswith(f" {word}")
    assert "--offset" in listing.splitlines()[-1]


def test_json_is_the_same_in_every_language(
    demo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    printed = set()
    for chosen in LANGS:
        monkeypatch.setenv("ARXIU_LANG", chosen)
        info = _out(capsys, "archive", "info", "--archive", str(demo), "--json")
        search = _out(
            capsys, "search", "pantà", "--archive", str(demo), "--model", "hashing", "--json",
            "--lang", "lg-eng",
        )  # fmt: skip
        printed.add((info, search))
        json.loads(info), json.loads(search)
    assert len(printed) == 1


@pytest.mark.parametrize("lang", LANGS, indirect=True)
def test_ask_s_citation_and_claim_blocks_follow_the_language(lang: str) -> None:
    good = Citation("oh1", 1, "El pantà", verified=True)
    bad = Citation("oh1", 9, "", verified=False)
    lines = citation_lines([good, bad])
    assert lines[0] == HEADINGS[lang][1]
    unverified = {"ca": "1 de 2 cites", "es": "1 de 2 citas", "en": "1 of 2 citations"}[lang]
    assert any(unverified in line for line in lines)
    answer = "Es va acabar el 1963."
    claim = Claim("1963", answer.index("1963"), answer.index("1963") + 4, "date", found=False)
    heading = claim_lines(answer, [claim])[0]
    start = {"ca": "Afirmacions: 1", "es": "Afirmaciones: 1", "en": "Claims: 1"}[lang]
    assert heading.startswith(start)


def letters(folder: Path, count: int) -> Path:
    """An archive whose section ``c1`` (Letters) holds ``count`` letters of one short title."""
    with open_archive(folder, create=True) as archive:
        archive.put_section(Section("c1", {"lg-eng": "Letters"}, label_field="c2"))
        archive.put_field(Field("c2", "c1", {"lg-eng": "Title"}, "text", position=1))
        for number in range(count):
            archive.create_record("c1", {"c2": [{"lang": "lg-cat", "value": f"Carta {number}"}]})
    return folder


SECTION_HEADINGS = {
    "ca": ("Letters (c1): 0 registres", "Letters (c1): 1 registre", "Letters (c1): 2 registres"),
    "es": ("Letters (c1): 0 registros", "Letters (c1): 1 registro", "Letters (c1): 2 registros"),
    "en": ("Letters (c1): 0 records", "Letters (c1): 1 record", "Letters (c1): 2 records"),
}
INDEXED = {
    "ca": ("1 fragment (incrustats: hashing-256 {one}); 2 elements indexats ara.",
           "2 fragments (incrustats: hashing-256 {two}); 1 element indexat ara."),
    "es": ("1 fragmento (incrustados: hashing-256 {one}); 2 elementos indexados ahora.",
           "2 fragmentos (incrustados: hashing-256 {two}); 1 elemento indexado ahora."),
    "en": ("1 chunk (embedded: hashing-256 {one}); 2 items indexed now.",
           "2 chunks (embedded: hashing-256 {two}); 1 item indexed now."),
}  # fmt: skip


@pytest.mark.parametrize("lang", LANGS, indirect=True)
def test_a_section_s_records_and_an_index_run_agree_with_their_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lang: str
) -> None:
    """``records list`` of 0, 1 and 2 letters; ``index`` of one letter (its record chunked and
    its text embedded: 2 items), then of a second with the same title (1 item: its text has
    its vector already)."""
    for count, heading in enumerate(SECTION_HEADINGS[lang]):
        folder = letters(tmp_path / str(count), count)
        listing = _out(capsys, "records", "list", "c1", "--archive", str(folder))
        assert listing.splitlines()[0] == heading
    one = tmp_path / "1"
    first = _out(capsys, "index", "--archive", str(one), "--model", "hashing").splitlines()[-1]
    with open_archive(one) as archive:
        archive.create_record("c1", {"c2": [{"lang": "lg-cat", "value": "Carta 0"}]})
    second = _out(capsys, "index", "--archive", str(one), "--model", "hashing").splitlines()[-1]
    said = [line.format(one="1/1", two="2/2") for line in INDEXED[lang]]
    assert [first, second] == said


CITATIONS = {
    "ca": ("La cita no està verificada.", "1 de 2 cites no està verificada.",
           "2 de 2 cites no estan verificades."),
    "es": ("La cita no está verificada.", "1 de 2 citas no está verificada.",
           "2 de 2 citas no están verificadas."),
    "en": ("The citation is unverified.", "1 of 2 citations is unverified.",
           "2 of 2 citations are unverified."),
}  # fmt: skip
CLAIMS = {
    "ca": ("Afirmacions: 1 comprovada, 1 no és als registres citats (⚠):",
           "Afirmacions: 2 comprovades, 2 no són als registres citats (⚠):"),
    "es": ("Afirmaciones: 1 comprobada, 1 no está en los registros citados (⚠):",
           "Afirmaciones: 2 comprobadas, 2 no están en los registros citados (⚠):"),
    "en": ("Claims: 1 checked, 1 not in the cited records (⚠):",
           "Claims: 2 checked, 2 not in the cited records (⚠):"),
}  # fmt: skip


@pytest.mark.parametrize("lang", LANGS, indirect=True)
def test_unverified_citations_and_missing_claims_agree_with_their_number(lang: str) -> None:
    good = Citation("oh1", 1, "El pantà", verified=True)
    bad = [Citation("oh1", 9, "", verified=False), Citation("oh1", 8, "", verified=False)]
    cited = ([bad[0]], [good, bad[0]], bad)
    counts = [line for c in cited for line in citation_lines(c) if line.startswith("⚠ ")]
    assert [line.removeprefix("⚠ ") for line in counts] == list(CITATIONS[lang])
    answer = "Es va acabar el 1963, amb 40 famílies."
    claims = [
        Claim(text, answer.index(text), answer.index(text) + len(text), "number", found=False)
        for text in ("1963", "40")
    ]
    headings = [claim_lines(answer, claims[:count])[0] for count in (1, 2)]
    assert headings == list(CLAIMS[lang])


INFO = {
    "ca": ("Registres   {n}   enllaços {n}   mitjans 0", "  c1                 {n}  Letters"),
    "es": ("Registros  {n}   enlaces {n}   medios 0", "  c1                 {n}  Letters"),
    "en": ("Records  {n}   links {n}   media 0", "  c1                 {n}  Letters"),
}
"""``archive info``'s records line and its section's line."""


@pytest.mark.parametrize("lang", LANGS, indirect=True)
def test_archive_info_writes_its_counts_with_the_language_s_thousands_separator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lang: str
) -> None:
    """1,001 letters, each a reply to the first (1,001 links): ``1.001`` in Catalan, ``1001``
    in Spanish (no separator under 10,000), ``1,001`` in English, in the records line, the
    links and the section's count."""
    folder = letters(tmp_path / "a", 0)
    with open_archive(folder) as archive:
        reply = Field("c3", "c1", {"lg-eng": "Reply to"}, "relation", target_section="c1")
        archive.put_field(reply)
        first = {"value": {"section_tipo": "c1", "section_id": 1}}
        for number in range(1001):
            title = [{"lang": "lg-cat", "value": f"Carta {number}"}]
            archive.create_record("c1", {"c2": title, "c3": [first]})
    shown = {"en": "1,001", "ca": "1.001", "es": "1001"}[lang]
    lines = _out(capsys, "archive", "info", "--archive", str(folder)).splitlines()
    records, section = INFO[lang]
    assert lines[2] == records.format(n=shown)
    assert lines[-1] == section.format(n=shown.rjust(5))


SEPARATORS = {"ca": ("1.234.567", "1,5", "1.234,5", "1,300"),
              "es": ("1.234.567", "1,5", "1234,5", "1,300"),
              "en": ("1,234,567", "1.5", "1,234.5", "1.300")}  # fmt: skip


@pytest.mark.parametrize("lang", LANGS, indirect=True)
def test_the_cli_writes_numbers_with_the_separators_of_the_language_s_table(lang: str) -> None:
    """The CLI's separators are its translation table's (``number.thousands``,
    ``number.decimal``), the ones the core's phrases are said with; English has no table and
    writes ``,`` and ``.``."""
    table = load_table(lang)
    assert (table.get(THOUSANDS, ","), table.get(DECIMAL, ".")) == (
        SEPARATORS[lang][0][1],
        SEPARATORS[lang][1][1],
    )
    said_so = (number(1234567), seconds(1.46), said("{x:,.1f}", x=1234.5), score(1.3))
    assert said_so == SEPARATORS[lang]  # a score: never read as a thousand three hundred
    assert said("{text}: {n}", text="1,5", n=2) == "1,5: 2"  # text is left as it is


GROUPED = {"ca": ("999", "1.234", "9.999", "10.000", "-1.234"),
           "es": ("999", "1234", "9999", "10.000", "-1234"),
           "en": ("999", "1,234", "9,999", "10,000", "-1,234")}  # fmt: skip


@pytest.mark.parametrize("lang", LANGS, indirect=True)
def test_spanish_groups_no_number_under_ten_thousand(lang: str) -> None:
    """Spanish writes 1234 and 12.345 (the RAE's rule; Qt's ``es_ES`` in the window), Catalan
    1.234, English 1,234 (``number.min_grouping`` in the table)."""
    assert tuple(number(n) for n in (999, 1234, 9999, 10_000, -1234)) == GROUPED[lang]


LABELS = {
    "ca": ("Cartes", "Títol", "Carta del batlle"),
    "es": ("Cartas", "Título", "Carta del alcalde"),
    "en": ("Letters", "Title", "The mayor's letter"),
}


@pytest.mark.parametrize("lang", LANGS, indirect=True)
def test_section_field_and_record_labels_are_said_in_the_cli_s_language(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lang: str
) -> None:
    """``archive info``, ``records list`` and ``records show`` name sections, fields and
    records in the CLI's language, as the window does (they said the English label first)."""
    folder = tmp_path / "a"
    with open_archive(folder, create=True) as archive:
        names = {"lg-cat": LABELS["ca"], "lg-spa": LABELS["es"], "lg-eng": LABELS["en"]}
        archive.put_section(Section("c1", {k: v[0] for k, v in names.items()}, label_field="c2"))
        archive.put_field(Field("c2", "c1", {k: v[1] for k, v in names.items()}, "text",
                                multilingual=True, position=1))  # fmt: skip
        title = [{"lang": k, "value": v[2]} for k, v in names.items()]
        archive.create_record("c1", {"c2": title})
    section, field, record = LABELS[lang]
    info = _out(capsys, "archive", "info", "--archive", str(folder)).splitlines()
    assert info[-1].endswith(f"  {section}"), info
    listed = _out(capsys, "records", "list", "c1", "--archive", str(folder)).splitlines()
    assert listed[0].startswith(f"{section} (c1): ") and listed[1].endswith(f"  {record}"), listed
    shown = _out(capsys, "records", "show", "c1", "1", "--archive", str(folder)).splitlines()
    assert shown[0].startswith(f"{record} (c1/1)") and f"{field} [c2]" in shown, shown


ERROR_LINES = {
    "en": [
        "error [export.section_unknown]: The archive has no section 'fons'.",
        "hint: `arxiu archive info` lists the sections.",
    ],
    "ca": [
        "error [export.section_unknown]: L'arxiu no té cap secció «fons».",
        "suggeriment: `arxiu archive info` mostra la llista de seccions.",
    ],
    "es": [
        "error [export.section_unknown]: El archivo no tiene ninguna sección «fons».",
        "sugerencia: `arxiu archive info` muestra la lista de secciones.",
    ],
}


@pytest.mark.parametrize("lang", ["en", "ca", "es"])
def test_an_error_and_the_frame_that_streams_it_are_said_in_the_language(
    lang: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The export's own error for an unknown section, raised by the core, and the same error as
    a run's error frame (``ErrorEvent``), and that frame read back from its payload (the wire
    carries the message's template and values beside the English): message and hint in the
    language."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    with open_archive(tmp_path / "a", create=True) as archive, pytest.raises(ArxiuError) as raised:
        require_section(archive, "fons")
    error = raised.value
    assert error_lines(error) == ERROR_LINES[lang]
    frame = ErrorEvent.from_error(error)
    assert error_lines(frame) == ERROR_LINES[lang]
    payload = frame.to_dict()
    assert payload["message"] == "The archive has no section 'fons'."
    assert (payload["template"], payload["params"]) == (
        "The archive has no section {tipo!r}.",
        {"tipo": "fons"},
    )
    read_back = ErrorEvent.from_dict(payload)
    assert read_back == frame and error_lines(read_back) == ERROR_LINES[lang]


@pytest.mark.parametrize(
    ("lang", "label"), [("ca", "Arxiu malmès: "), ("es", "Archivo dañado: "), ("en", "")]
)
def test_a_message_the_tables_do_not_hold_is_led_by_its_label(
    lang: str, label: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An OS's words, or an older server's message: the code's label says what went wrong in
    the language first (English needs none)."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    error = ArxiuError("archive.corrupt", "database disk image is malformed")
    assert error_lines(error) == [
        f"error [archive.corrupt]: {label}database disk image is malformed"
    ]
