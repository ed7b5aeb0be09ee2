"""Ingestion: validate input files and store their battles, one transaction per file."""

from arena.ingest.loader import IngestError, IngestReport, RejectSink, ingest_file

__all__ = ["IngestError", "IngestReport", "RejectSink", "ingest_file"]
