"""Demo-like data: the first rows of both bundled files stand in for them (same shapes)."""

from __future__ import annotations

import gzip
from itertools import islice

from arena.core import resources

#: Rows of each bundled file (enough for every demo board to rank some models).
ROWS = 4000


def demo_slices(tmp_path, monkeypatch, rows: int = ROWS) -> None:
    """Point ``arena demo`` at the first ``rows`` rows of both bundled files."""
    out = []
    for (source, path), name in zip(
        resources.DEMO_SOURCES, ("votes.csv", "judge.jsonl"), strict=True
    ):
        with gzip.open(path(), "rt", encoding="utf-8") as f:
            (tmp_path / name).write_text("".join(islice(f, rows + 1)), encoding="utf-8")
        out.append((source, lambda p=tmp_path / name: p))
    monkeypatch.setattr(resources, "DEMO_SOURCES", tuple(out))
