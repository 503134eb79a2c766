"""The archive browser: sections, the records table, the record view, search."""
