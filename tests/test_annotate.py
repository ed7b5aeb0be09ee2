"""arena models annotate: metadata from the CLI and from CSV/JSON files, on both engines."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import insert, select

from arena.db.models import Model
from arena.store.annotate import AnnotateError, read_annotations

NAMES = ["alpha", "beta", "<script>x</script>"]


@pytest.fixture
def models(engine):
    with engine.begin() as conn:
        conn.execute(insert(Model), [{"name": n, "hidden": False} for n in NAMES])
    return engine


def meta(engine, name):
    with engine.connect() as conn:
        m = conn.execute(
            select(
                Model.display_name, Model.organisation, Model.licence, Model.link, Model.hidden
            ).where(Model.name == name)
        ).one()
        return (m.display_name, m.organisation, m.licence, m.link, bool(m.hidden))


def test_cli_sets_and_clears_fields(models, run_cli):
    out = run_cli(
        "models",
        "annotate",
        "alpha",
        "--display-name",
        "Alpha 1",
        "--organisation",
        "Acme",
        "--licence",
        "MIT",
        "--link",
        "https://a.example",
        "--hide",
    ).output
    assert "annotated 1 model" in out
    assert meta(models, "alpha") == ("Alpha 1", "Acme", "MIT", "https://a.example", True)
    run_cli("models", "annotate", "alpha", "--show", "--licence", "")
    assert meta(models, "alpha") == ("Alpha 1", "Acme", None, "https://a.example", False)
    # Hidden models still appear in `arena models` (the store), flagged.
    listing = json.loads(run_cli("models", "--format", "json").output)["models"]
    assert {m["model"] for m in listing} == set(NAMES)


def test_cli_errors(models, run_cli, tmp_path):
    res = run_cli("models", "annotate", "nope", "--hide", ok=False)
    assert res.exit_code == 1 and "unknown model 'nope'" in res.output
    res = run_cli("models", "annotate", "alpha", ok=False)
    assert res.exit_code == 2 and "nothing to set" in res.output
    res = run_cli("models", "annotate", "alpha", "--link", "javascript:alert(1)", ok=False)
    assert res.exit_code == 1 and "must be an http(s) URL" in res.output
    res = run_cli("models", "annotate", ok=False)
    assert res.exit_code == 2
    f = tmp_path / "m.csv"
    f.write_text("model,hidden\nalpha,true\n")
    res = run_cli("models", "annotate", "alpha", "--from", str(f), ok=False)
    assert res.exit_code == 2 and "not both" in res.output


def test_from_csv_is_all_or_nothing(models, run_cli, tmp_path):
    good = tmp_path / "models.csv"
    good.write_text(
        "model,display_name,organisation,licence,link,hidden\n"
        "alpha,Alpha,Acme,Apache-2.0,https://alpha.example,no\n"
        "beta,,Beta Inc,,,yes\n"
        '"<script>x</script>",Script,,,,\n',
        encoding="utf-8",
    )
    assert "annotated 3 models" in run_cli("models", "annotate", "--from", str(good)).output
    assert meta(models, "alpha") == ("Alpha", "Acme", "Apache-2.0", "https://alpha.example", False)
    assert meta(models, "beta") == (None, "Beta Inc", None, None, True)
    assert meta(models, "<script>x</script>")[0] == "Script"

    bad = tmp_path / "bad.csv"
    bad.write_text("model,organisation\nalpha,Changed\nghost,X\n", encoding="utf-8")
    res = run_cli("models", "annotate", "--from", str(bad), ok=False)
    assert res.exit_code == 1 and "unknown model 'ghost'" in res.output
    assert meta(models, "alpha")[1] == "Acme"  # nothing applied


def test_from_json(models, run_cli, tmp_path):
    f = tmp_path / "models.json"
    f.write_text(
        json.dumps(
            [
                {"model": "beta", "organisation": "B", "hidden": True},
                {"model": "alpha", "link": "https://alpha.example"},
            ]
        ),
        encoding="utf-8",
    )
    run_cli("models", "annotate", "--from", str(f))
    assert meta(models, "beta") == (None, "B", None, None, True)
    assert meta(models, "alpha")[3] == "https://alpha.example"


@pytest.mark.parametrize(
    "content,message",
    [
        ("[1, 2]", "list of objects"),
        ("{not json", "not valid JSON"),
        ('[{"model": "a", "colour": "red"}]', "unknown column"),
        ('[{"model": "a", "hidden": "maybe"}]', "hidden must be true or false"),
        ('[{"organisation": "x"}]', "missing model name"),
    ],
)
def test_read_annotations_rejects(tmp_path, content, message):
    f = tmp_path / "a.json"
    f.write_text(content, encoding="utf-8")
    with pytest.raises(AnnotateError, match=message):
        read_annotations(f)


def test_read_annotations_csv_needs_model_column(tmp_path):
    f = tmp_path / "a.csv"
    f.write_text("name,organisation\nx,y\n", encoding="utf-8")
    with pytest.raises(AnnotateError, match="'model' column"):
        read_annotations(f)
