"""The semantic index: chunking, embeddings, hybrid search and the background indexer."""

from app.core.index.embedders import (
    Embedder,
    HashingEmbedder,
    SentenceTransformerEmbedder,
    UseEmbedder,
)
from app.core.index.hits import Searcher, SearchFilter, SearchHit, SearchMode
from app.core.index.indexer import Progress
from app.core.index.opening import ArchiveIndex, open_index
from app.core.index.service import Index

__all__ = [
    "ArchiveIndex",
    "Embedder",
    "HashingEmbedder",
    "Index",
    "Progress",
    "SearchFilter",
    "SearchHit",
    "SearchMode",
    "Searcher",
    "SentenceTransformerEmbedder",
    "UseEmbedder",
    "open_index",
]
