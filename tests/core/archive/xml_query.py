"""XPath selections for the standards tests: counts taken from the files themselves, apart
from the importer or exporter under test."""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

Node = etree._ElementTree | etree._Element


@dataclass(frozen=True)
class XPath:
    """XPath with one set of namespace prefixes (``nodes`` and ``strings`` select with it)."""

    namespaces: dict[str, str] = field(default_factory=dict)

    def nodes(self, tree: Node, path: str) -> list[etree._Element]:
        """The elements ``path`` selects (an independent XPath count of the file)."""
        found = tree.xpath(path, namespaces=self.namespaces)
        assert isinstance(found, list)
        return [n for n in found if isinstance(n, etree._Element)]

    def strings(self, tree: Node, path: str) -> list[str]:
        """The text or attribute values ``path`` selects."""
        found = tree.xpath(path, namespaces=self.namespaces)
        assert isinstance(found, list)
        return [str(n) for n in found]
