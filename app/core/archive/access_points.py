"""The sections an import makes for the access points its records name: persons, families and
corporate bodies, places, subjects (:mod:`app.core.archive.importers.authorities` creates them
and their stubs).

Kept apart from the importers so that what only needs to tell such a section from one that
describes (the results' order, a list answer's sections, the CSV export's columns) does not
load every importer and its parsers.
"""

from __future__ import annotations

AGENTS = "agent1"
PLACES = "place1"
SUBJECTS = "subject1"
AUTHORITY_SECTIONS = (AGENTS, PLACES, SUBJECTS)
"""The sections whose stubs an import creates for its access points (counted in an import's
summary with the records of its own sections)."""
