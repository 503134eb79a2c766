"""The semantic index: chunks, embeddings, FTS5, hybrid search, the background indexer."""
