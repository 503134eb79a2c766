"""Arxiu: a local-first desktop assistant for archivists."""

__version__ = "0.1.0"
