"""The grounded prompt a real question sends to the bundled model, built from the demo archive.

The small bundled model cannot plan tool calls, so a question runs one search and the model is
given the hits (:mod:`app.core.agent.grounding`). This builds the same messages for a demo
question: the demo archive in a temporary folder, its lexical index (the search a fresh install
answers with while the vectors are still being computed; its hits, five sources here, differ
from the hybrid search's), the sources the run would cite and
:func:`~app.core.agent.grounding.grounded_messages` on them.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from app.core.agent.grounding import SEARCH_K, grounded_messages
from app.core.agent.request import CheckedRequest
from app.core.agent.sources import hits_of, select_sources
from app.core.archive.demo import create_demo_archive
from app.core.archive.model import RecordKey
from app.core.index.embedders import HashingEmbedder
from app.core.index.service import Index
from app.core.models.base import Message
from app.core.models.catalog import builtin_local

QUESTION = "What do the interviews say about migration, work in the mills and the reservoir?"


def grounded_prompt(question: str = QUESTION) -> list[Message]:
    """The messages of the one model turn a grounded run on the demo sends for ``question``."""
    with tempfile.TemporaryDirectory(prefix="arxiu-bench-") as folder:
        archive = create_demo_archive(Path(folder) / "demo")
        index = Index(archive, HashingEmbedder())
        try:
            index.sync_lexical()
            hits = index.search(question, k=SEARCH_K, mode="lexical", group_by_record=True)
            sources = select_sources(hits_of({"hits": [hit.to_dict() for hit in hits]}))
            for source in sources:
                if source.needs_label and isinstance(source.section_id, int):
                    key = RecordKey(source.section_tipo, source.section_id)
                    source.record_label = archive.record_label(key, "en")
            request = CheckedRequest(question, builtin_local())
            return grounded_messages(request, [], sources, None)
        finally:
            index.close()
            archive.close()
