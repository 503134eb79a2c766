"""File → Import… pieces: the formats offered, the CSV/XLSX mapping page, the summary text."""
