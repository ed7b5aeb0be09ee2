"""Gzip input is recognised by its first bytes everywhere, whatever the file is called."""

from __future__ import annotations

import gzip
import shutil

from arena.evals.itemfile import read_results
from tests.helpers.paths import ROOT

RESULTS = ROOT / "tests" / "data" / "eval_results.csv"


def test_item_files_gzip_by_content_not_name(tmp_path):
    plain = read_results([str(RESULTS)])
    packed = tmp_path / "results.csv"  # compressed, but named like plain text
    packed.write_bytes(gzip.compress(RESULTS.read_bytes()))
    named = tmp_path / "named.csv.gz"  # plain text, but named like gzip
    shutil.copy(RESULTS, named)
    for path in (packed, named):
        got = read_results([str(path)])
        assert got.scores == plain.scores


def test_ingest_gzip_by_content_not_name(run_cli, tmp_path):
    path = tmp_path / "votes.csv"
    path.write_bytes(gzip.compress(b"model_a,model_b,winner\na,b,tie\nb,c,model_a\n"))
    assert "2 inserted" in run_cli("ingest", str(path)).output
    named = tmp_path / "plain.csv.gz"
    named.write_bytes(b"model_a,model_b,winner\nc,d,tie\n")
    assert "1 inserted" in run_cli("ingest", str(named)).output
