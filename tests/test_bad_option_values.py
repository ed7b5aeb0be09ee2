"""A bad option value is refused before any work, with one message naming it.

The library checks every option against its declaration
(:mod:`arena.core.options`): types (bool, float and text are no whole
numbers), NaN and infinity, bounds (rounds at most ``ROUNDS_MAX``, 64-bit seeds
and snapshot ids), choices. Through the front door that is an
:class:`~arena.core.errors.OptionError` naming the parameter; on the command
line one line naming the flag. Nothing is written when a value is refused, on
SQLite and PostgreSQL.
"""

from __future__ import annotations

import pytest

import arena
from arena.core.defaults import ROUNDS_MAX
from arena.core.errors import OptionError
from tests.helpers.cli import cli_for
from tests.helpers.files import synth_battles

NAN, INF = float("nan"), float("inf")

#: (keyword, bad value) of ``rebuild``: each once, checked before the database is read.
REBUILD = [
    ("seed", "x"),
    ("seed", None),
    ("seed", 2**70),
    ("seed", -1),
    ("seed", 1.5),
    ("rounds", "100"),
    ("rounds", 1e12),
    ("rounds", 10**8),
    ("rounds", ROUNDS_MAX + 1),
    ("rounds", True),
    ("rounds", 3),
    ("level", "0.9"),
    ("level", NAN),
    ("level", 1.0),
    ("min_battles", NAN),
    ("min_battles", -1),
    ("max_models", NAN),
    ("max_models", 2**70),
    ("max_boards", 0),
    ("prior", NAN),
    ("style_reg", INF),
    ("ci", "nope"),
    ("ties", None),
    ("cluster", "judges"),
    ("read", "bogus"),
    ("simultaneous", "yes"),
    ("style_features", "sentiment"),
]


@pytest.fixture
def stored(db_url, tmp_path):
    """An arena with battles and one snapshot; ``state()`` is what is stored."""
    db = arena.open(db_url)
    synth_battles(tmp_path / "battles.csv", n=300, models=4)
    db.ingest(tmp_path / "battles.csv")
    db.rebuild(rounds=20)

    def state():
        models = db.models().to_dict()["models"]
        return len(db.snapshots().to_dict()["snapshots"]), sum(m["battles"] for m in models)

    db.state = state
    yield db
    db.close()


def _refused(method, name, *args, **kwargs):
    """``method(*args, **kwargs)`` raises an OptionError naming ``name``; its message."""
    with pytest.raises(OptionError) as caught:
        method(*args, **kwargs)
    assert caught.value.name == name, caught.value
    assert str(caught.value).startswith(name + " "), caught.value
    return str(caught.value)


def test_rebuild_refuses_each_bad_value_and_writes_nothing(stored):
    before = stored.state()
    messages = {}
    for name, value in REBUILD:
        messages[name, repr(value)] = _refused(stored.rebuild, name, **{name: value})
    assert stored.state() == before
    assert messages["seed", "'x'"] == "seed must be a whole number, not 'x'"
    assert messages["seed", "None"] == "seed must be a whole number, not None"
    assert messages["seed", repr(2**70)].startswith("seed must be at most 9223372036854775807")
    assert messages["rounds", "'100'"] == "rounds must be a whole number, not '100'"
    assert messages["rounds", repr(10**8)].startswith(f"rounds must be at most {ROUNDS_MAX}")
    assert messages["rounds", "3"] == "rounds must be at least 10"
    assert messages["level", "'0.9'"] == "level must be a number, not '0.9'"
    assert messages["min_battles", "nan"] == "min_battles must be a whole number, not nan"
    assert messages["prior", "nan"] == "prior must be a finite number, not nan"
    assert messages["read", "'bogus'"].startswith("read must be one of auto, counts, battles")


def test_readers_refuse_bad_ids_and_counts(stored, tmp_path):
    _refused(stored.leaderboard, "snapshot", snapshot=2**70)
    _refused(stored.leaderboard, "snapshot", snapshot="1")
    _refused(stored.leaderboard, "component", component=NAN)
    _refused(stored.compare, "snapshot", "model-0", "model-1", snapshot=2**70)
    _refused(stored.diff, "new", 1, 2**70)
    _refused(stored.plan, "top", top=NAN)
    _refused(stored.plan, "n", n=2**70)
    _refused(stored.plan, "rule", rule="fastest")
    _refused(stored.plan_power, "power", power=NAN)
    before = stored.state()
    _refused(stored.audit, "alpha", alpha=NAN)
    _refused(stored.audit, "rounds", rounds=10**8)
    _refused(stored.prune_snapshots, "keep_last", keep_last=0)
    _refused(stored.prune_snapshots, "keep_days", keep_days=NAN)
    assert stored.state() == before


def test_ingest_refuses_a_bad_format_or_expansion(stored, tmp_path):
    path = tmp_path / "more.csv"
    synth_battles(path, n=50, models=3, seed=9)
    before = stored.state()
    message = _refused(stored.ingest, "input_format", path, input_format="bogus")
    assert message == "input_format must be one of auto, csv, jsonl, json (got 'bogus')"
    _refused(stored.ingest, "max_expand", path, max_expand=NAN)
    _refused(stored.ingest, "max_expand", path, max_expand=0)
    assert stored.state() == before


def test_publish_refuses_bad_values_and_writes_no_site(stored, tmp_path):
    site = tmp_path / "site"
    for name, value in (
        ("heatmap_top", NAN),
        ("heatmap_top", True),
        ("heatmap_top", 1),
        ("max_boards", 2**70),
        ("snapshot", 2**70),
    ):
        _refused(stored.publish, name, site, **{name: value})
    assert not site.exists()


def test_nightly_refuses_bad_values_before_reading_the_drop_folder(stored, tmp_path):
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    synth_battles(incoming / "a.csv", n=50, models=3, seed=4)
    before = stored.state()
    for name, value in (
        ("rounds", 1e12),
        ("seed", None),
        ("min_battles", NAN),
        ("heatmap_top", NAN),
        ("prune_keep_last", 0),
        ("prune_keep_days", INF),
        ("tiers", "best"),
    ):
        _refused(stored.nightly, name, incoming, tmp_path / "site", **{name: value})
    assert stored.state() == before
    assert (incoming / "a.csv").exists() and not (tmp_path / "site").exists()


def test_a_refused_first_command_creates_no_database(tmp_path):
    """The check comes before the database is opened: no empty arena.db is left behind."""
    path = tmp_path / "battles.csv"
    synth_battles(path, n=20, models=3)
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    _refused(arena.open, "wait", f"sqlite:///{tmp_path / 'new.db'}", wait=NAN)
    db = arena.open(f"sqlite:///{tmp_path / 'new.db'}")
    _refused(db.ingest, "input_format", path, input_format="bogus")
    _refused(db.nightly, "rounds", incoming, tmp_path / "site", rounds=2**70)
    _refused(db.rebuild, "seed", seed=None)
    assert not (tmp_path / "new.db").exists()


#: (command line, flag named): each a one-line error, exit 1, nothing written.
CLI = [
    (("rebuild", "--rounds", "1e12"), "--rounds"),
    (("rebuild", "--rounds", "100001"), "--rounds"),
    (("rebuild", "--rounds", "3"), "--rounds"),
    (("rebuild", "--seed", "x"), "--seed"),
    (("rebuild", "--seed", str(2**70)), "--seed"),
    (("rebuild", "--level", "nan"), "--level"),
    (("rebuild", "--min-battles", "nan"), "--min-battles"),
    (("rebuild", "--max-models", "nan"), "--max-models"),
    (("rebuild", "--prior", "inf"), "--prior"),
    (("rebuild", "--ci", "nope"), "--ci"),
    (("leaderboard", "--snapshot", str(2**70)), "--snapshot"),
    (("publish", "SITE", "--heatmap-top", "nan"), "--heatmap-top"),
    (("ingest", "FILE", "--input-format", "bogus"), "--input-format"),
    (("ingest", "FILE", "--max-expand", "0"), "--max-expand"),
    (("audit", "--alpha", "nan"), "--alpha"),
    (("plan", "--top", "0"), "--top"),
    (("plan", "--rule", "fastest"), "--rule"),
    (("nightly", "--incoming", "IN", "--site", "SITE", "--rounds", "1e12"), "--rounds"),
]


def test_cli_says_one_line_naming_the_flag(stored, db_url, tmp_path):
    run = cli_for(db_url)
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    path = tmp_path / "more.csv"
    synth_battles(path, n=50, models=3, seed=9)
    site = tmp_path / "site"
    words = {"SITE": str(site), "FILE": str(path), "IN": str(incoming)}
    before = stored.state()
    for args, flag in CLI:
        result = run(*(words.get(a, a) for a in args), ok=False)
        lines = result.output.strip().splitlines()
        assert result.exit_code == 1, (args, result.output)
        assert len(lines) == 1 and lines[0].startswith(f"Error: {flag} "), (args, lines)
        assert "Traceback" not in result.output
    assert stored.state() == before and not site.exists()
