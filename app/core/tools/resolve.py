"""Resolving names: section and field labels (any language) to tipos; candidates, never a guess.

A name resolves when it is a tipo, or when exactly one section (or field) carries it as a label in
some language, compared case- and accent-insensitively. Anything else raises a
:class:`~app.core.errors.ToolError` whose ``details["candidates"]`` lists what the name might have
meant, so the model (or the person) can pick.
"""

from __future__ import annotations

import difflib
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, NotRequired, TypedDict

from app.core.archive.model import Field, Section
from app.core.errors import ToolError
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.store import Archive

MAX_CANDIDATES = 8
PATH_SEPARATORS = (">", "/", "→")


def fold(text: str) -> str:
    """``text`` lower-cased, without accents and with collapsed spaces, for comparisons."""
    decomposed = unicodedata.normalize("NFKD", str(text))
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(bare.casefold().split())


class CandidateDict(TypedDict):
    """:class:`Candidate`'s JSON form (``section_tipo`` for a field only)."""

    kind: str
    tipo: str
    label: str
    section_tipo: NotRequired[str]
    match: str


@dataclass(frozen=True)
class Candidate:
    """A section or field a name might mean, and how well it matched."""

    kind: str
    tipo: str
    label: str
    section_tipo: str | None
    match: str
    """``tipo``, ``label`` (exact label), ``partial`` (substring) or ``similar`` (fuzzy)."""

    def to_dict(self) -> CandidateDict:
        """JSON form for tool results and error details."""
        if self.section_tipo is None:
            return {"kind": self.kind, "tipo": self.tipo, "label": self.label, "match": self.match}
        return {
            "kind": self.kind,
            "tipo": self.tipo,
            "label": self.label,
            "section_tipo": self.section_tipo,
            "match": self.match,
        }


_RANK = {"tipo": 0, "label": 1, "partial": 2, "similar": 3}


def _match(name: str, tipo: str, labels: dict[str, str]) -> str | None:
    """How ``name`` matches a node with ``tipo`` and ``labels`` (``None``: not at all)."""
    if name == tipo or fold(name) == fold(tipo):
        return "tipo"
    wanted = fold(name)
    folded = [fold(v) for v in labels.values() if v]
    if wanted in folded:
        return "label"
    if wanted and any(wanted in f or (len(f) > 2 and f in wanted) for f in folded):
        return "partial"
    if difflib.get_close_matches(wanted, folded, n=1, cutoff=0.75):
        return "similar"
    return None


def section_candidates(archive: Archive, name: str, lang: str = "lg-eng") -> list[Candidate]:
    """Sections that ``name`` may mean, best first."""
    found = []
    for section in archive.sections():
        how = _match(name, section.tipo, section.labels)
        if how:
            found.append(Candidate("section", section.tipo, section.label(lang), None, how))
    return sorted(found, key=lambda c: (_RANK[c.match], c.tipo))[:MAX_CANDIDATES]


def field_candidates(
    archive: Archive, name: str, section_tipo: str | None = None, lang: str = "lg-eng"
) -> list[Candidate]:
    """Fields (of one section, or of all) that ``name`` may mean, best first."""
    found = []
    for fld in archive.fields(section_tipo):
        how = _match(name, fld.tipo, fld.labels)
        if how:
            found.append(Candidate("field", fld.tipo, fld.label(lang), fld.section_tipo, how))
    return sorted(found, key=lambda c: (_RANK[c.match], c.section_tipo or "", c.tipo))[
        :MAX_CANDIDATES
    ]


def _unique(candidates: list[Candidate]) -> Candidate | None:
    """The one exact (tipo or full label) candidate, if there is exactly one."""
    for level in ("tipo", "label"):
        exact = [c for c in candidates if c.match == level]
        if len(exact) == 1:
            return exact[0]
        if len(exact) > 1:
            return None
    return None


def resolve_section(archive: Archive, name: str, lang: str = "lg-eng") -> Section:
    """The section named by a tipo or an exact label.

    Raises:
        ToolError: ``mcp.section_unknown`` with ``details["candidates"]``.
    """
    if archive.has_section(name):
        return archive.section(name)
    candidates = section_candidates(archive, name, lang)
    chosen = _unique(candidates)
    if chosen is not None:
        return archive.section(chosen.tipo)
    if not candidates:
        candidates = [
            Candidate("section", s.tipo, s.label(lang), None, "listed")
            for s in archive.sections()[:MAX_CANDIDATES]
        ]
    raise ToolError(
        "mcp.section_unknown",
        _listing(Phrase.of("No single section is called {name!r}.", name=name), candidates),
        hint="Pick one of the candidates by tipo, or list the sections.",
        details={"name": name, "candidates": [c.to_dict() for c in candidates]},
    )


def resolve_field(archive: Archive, section_tipo: str, name: str, lang: str = "lg-eng") -> Field:
    """The field of ``section_tipo`` named by a tipo or an exact label.

    Raises:
        ToolError: ``mcp.field_unknown`` with ``details["candidates"]`` (never a guess).
    """
    fields = archive.fields(section_tipo)
    for fld in fields:
        if fld.tipo == name:
            return fld
    candidates = field_candidates(archive, name, section_tipo, lang)
    chosen = _unique(candidates)
    if chosen is not None:
        return next(f for f in fields if f.tipo == chosen.tipo)
    if not candidates:
        candidates = [
            Candidate("field", f.tipo, f.label(lang), section_tipo, "listed")
            for f in fields[:MAX_CANDIDATES]
        ]
    raise ToolError(
        "mcp.field_unknown",
        _listing(
            Phrase.of(
                "Section {section} has no single field called {name!r}.",
                section=section_tipo,
                name=name,
            ),
            candidates,
        ),
        hint="Use one of the candidates' tipos, or describe the section to see its fields.",
        details={
            "section_tipo": section_tipo,
            "name": name,
            "candidates": [c.to_dict() for c in candidates],
        },
    )


def _listing(lead: Phrase, candidates: list[Candidate]) -> Phrase:
    """``lead``, followed by the candidates when there are any."""
    if not candidates:
        return lead
    names = ", ".join(f"{c.label} ({c.tipo})" for c in candidates)
    return Phrase.of("{lead} Candidates: {names}.", lead=lead, names=names)


def split_label_path(path: str) -> list[str]:
    """``"Oral history > Informant > Name"`` as ``["Oral history", "Informant", "Name"]``."""
    text = path
    for separator in PATH_SEPARATORS[1:]:
        text = text.replace(separator, PATH_SEPARATORS[0])
    return [part.strip() for part in text.split(PATH_SEPARATORS[0]) if part.strip()]


def resolve_tipo_path(archive: Archive, parts: list[str], lang: str = "lg-eng") -> list[str]:
    """A path of names as alternating section and field tipos across portals.

    ``["Oral history", "Informant", "Name"]`` becomes ``["oh1", "oh24", "rsc197", "rsc85"]``:
    the first part is a section, then fields; after a relation field the path continues in its
    target section, whose tipo is written into the path (and may be given explicitly).

    Raises:
        ToolError: ``mcp.path_invalid`` for an empty path or a step after a non-relation field;
            ``mcp.section_unknown`` / ``mcp.field_unknown`` for names that do not resolve.
    """
    if not parts:
        raise ToolError("mcp.path_invalid", "The path is empty.", hint="Start with a section.")
    section = resolve_section(archive, parts[0], lang)
    out = [section.tipo]
    current: str | None = section.tipo
    expect_target = False
    for part in parts[1:]:
        if current is None:
            raise ToolError(
                "mcp.path_invalid",
                Phrase.of(
                    "The path continues after {field}, which is not a relation field.",
                    field=out[-1],
                ),
                hint="Only relation (portal) fields lead into another section.",
            )
        if expect_target and names_section(archive, part, current):
            expect_target = False
            continue  # the target section, named explicitly after a relation field
        fld = resolve_field(archive, current, part, lang)
        out.append(fld.tipo)
        current = fld.target_section if fld.kind == "relation" else None
        expect_target = current is not None
        if current is not None:
            out.append(current)
    return out


def names_section(archive: Archive, name: str, tipo: str) -> bool:
    """Whether ``name`` is the tipo or one of the labels of section ``tipo``."""
    if name == tipo:
        return True
    if not archive.has_section(tipo):
        return False
    return fold(name) in {fold(v) for v in archive.section(tipo).labels.values() if v}
