"""Helpers shared by test modules (plain functions and data; fixtures live in conftest.py).

Test modules import helpers from here, never from another test module or from a
conftest: a test file is collected, not imported as a library.

- :mod:`tests.helpers.paths`: the repository, ../shared and the bundled data files.
- :mod:`tests.helpers.postgres`: a fresh PostgreSQL schema per test.
- :mod:`tests.helpers.cli`: running ``arena`` in-process (click) or as a real process.
- :mod:`tests.helpers.files`: battle files (CSV, JSON lines) with known content.
- :mod:`tests.helpers.db`: reading back what a command stored.
- :mod:`tests.helpers.html`: a tiny DOM of a published page.
- :mod:`tests.helpers.ingest`: interrupting an ingest mid-write.
- :mod:`tests.helpers.simulate`: battles from known strengths (engine arrays).
"""
