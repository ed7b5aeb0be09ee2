"""Ingestion: validate input files and store their battles, one transaction per file."""

from arena.ingest.loader import IngestError, IngestReport, ingest_file
from arena.ingest.rejects import RejectSink

__all__ = ["IngestError", "IngestReport", "RejectSink", "ingest_file"]
