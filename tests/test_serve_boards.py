"""`arena serve` draws and stores votes under the board a request names, on both engines.

`?category=` is a key or a label in any case, resolved once as `arena
leaderboard --category` resolves it: the vote is stored under the key, never
under a new category spelled as the request spelled it; an unknown category is
404.  A vote on a pair drawn for a derived category is stored with the rule's
tags, so `arena categories derive` of the same rule keeps it.
"""

from __future__ import annotations

import pytest

httpx = pytest.importorskip("httpx", reason="arena[serve] / the test extra installs httpx")
pytest.importorskip("fastapi", reason="arena[serve] installs fastapi")

from sqlalchemy import select  # noqa: E402

from tests.helpers.cli import cli_for  # noqa: E402
from tests.helpers.postgres import pg_schema  # noqa: E402
from tests.helpers.serve import (  # noqa: E402
    Server,
    pair_and_vote,
    prepare,
    start,
    stop,
    vote_categories,
)

pytestmark = pytest.mark.slow  # a real server process


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve")
    urls = iter([f"sqlite:///{tmp / 'arena.db'}"]) if request.param == "sqlite" else pg_schema()
    url = next(urls)
    keys = prepare(url, tmp, tags=True)
    run = cli_for(url)
    run("categories", "label", "math", "Sums and proofs")
    run("categories", "derive", "hardx", "--tags", "hard.a,hard.b", "--at-least", "2")
    run("rebuild", "--rounds", "50", "--category", "math", "-q")
    run("rebuild", "--rounds", "50", "--category", "hardx", "-q")
    proc, base = start(url, "--seed", "5")
    yield Server(url, base, proc, keys)
    stop(proc)
    next(urls, None)


def _categories(url: str) -> set[str]:
    from arena.db.models import Category
    from arena.db.session import open_engine

    engine = open_engine(url, migrate_new=False)
    try:
        with engine.connect() as conn:
            return set(conn.execute(select(Category.name)).scalars())
    finally:
        engine.dispose()


@pytest.mark.parametrize("spelled", ["MATH", "Math", "sums and proofs"])
def test_a_category_by_any_spelling_stores_the_vote_under_its_key(server, spelled):
    before = _categories(server.url)
    _, vote = pair_and_vote(server.client("voter"), category=spelled)
    assert vote.status_code == 201, vote.text
    assert vote_categories(server.url, vote.json()["id"]) == ["math"]
    assert _categories(server.url) == before  # no category spelled as the request


def test_an_unknown_category_is_404(server):
    r = server.client("voter").get("/v1/pair", params={"category": "no-such-thing"})
    assert r.status_code == 404 and "no-such-thing" in r.json()["error"]["message"]


def test_a_derived_category_vote_survives_re_deriving_its_rule(server):
    _, vote = pair_and_vote(server.client("voter"), category="hardx")
    assert vote.status_code == 201, vote.text
    vote_id = vote.json()["id"]
    assert "hardx" in vote_categories(server.url, vote_id)
    run = cli_for(server.url)
    run("categories", "derive", "hardx", "--tags", "hard.a,hard.b", "--at-least", "2")
    assert "hardx" in vote_categories(server.url, vote_id)
