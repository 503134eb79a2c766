"""Safe XML parsing: each refusal coded, the depth bound libxml2's own."""

from __future__ import annotations

import pytest

from app.core.archive.importers import safe_xml
from app.core.errors import ImportFailed


def nested(depth: int) -> bytes:
    return b"<c>" * depth + b"</c>" * depth


def test_the_deepest_accepted_document_is_max_depth_deep() -> None:
    root = safe_xml.parse_bytes(nested(safe_xml.MAX_DEPTH))
    assert len(list(root.iter())) == safe_xml.MAX_DEPTH


@pytest.mark.parametrize("depth", [safe_xml.MAX_DEPTH + 1, 100_000])
def test_a_deeper_document_is_too_deep(depth: int) -> None:
    with pytest.raises(ImportFailed) as caught:
        safe_xml.parse_bytes(nested(depth), "deep.xml")
    assert caught.value.code == "import.too_deep"


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b'<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>', "import.xml_entity"),
        (b"<a><b></a>", "import.xml_malformed"),
        (b"", "import.xml_malformed"),
        (b'<!DOCTYPE ead SYSTEM "ead.dtd"><ead/>', ""),  # a relative DTD is ignored, not loaded
    ],
)
def test_refusals_are_coded(data: bytes, code: str) -> None:
    if not code:
        assert safe_xml.local(safe_xml.parse_bytes(data)) == "ead"
        return
    with pytest.raises(ImportFailed) as caught:
        safe_xml.parse_bytes(data, "x.xml")
    assert caught.value.code == code


def test_a_document_over_the_size_bound_is_refused_before_parsing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(safe_xml, "MAX_BYTES", 10)
    with pytest.raises(ImportFailed) as caught:
        safe_xml.parse_bytes(b"<a>" + b"x" * 20 + b"</a>")
    assert caught.value.code == "import.too_large"
