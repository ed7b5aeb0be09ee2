"""`arena serve`'s HTTP contract beyond the happy path, on SQLite and PostgreSQL.

One error body shape for every error answer (Starlette's 404 and 405
included), duplicate JSON keys refused as `arena ingest` refuses them, the
same Content-Type rule on both POST routes, If-None-Match compared as RFC 9110
says, and an unknown source refused without listing the others.
"""

from __future__ import annotations

import pytest

httpx = pytest.importorskip("httpx", reason="arena[serve] / the test extra installs httpx")
pytest.importorskip("fastapi", reason="arena[serve] installs fastapi")

from tests.helpers.postgres import pg_schema  # noqa: E402
from tests.helpers.serve import Server, prepare, start, stop  # noqa: E402

pytestmark = pytest.mark.slow  # a real server process


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve")
    urls = iter([f"sqlite:///{tmp / 'arena.db'}"]) if request.param == "sqlite" else pg_schema()
    url = next(urls)
    keys = prepare(url, tmp)
    proc, base = start(url, "--seed", "3")
    yield Server(url, base, proc, keys)
    stop(proc)
    next(urls, None)


def _one_shape(r: httpx.Response) -> str:
    """The message of an error answer, asserting the documented shape."""
    body = r.json()
    assert set(body) == {"error"}, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"], body
    return body["error"]["message"]


def test_every_error_answer_has_the_one_shape(server):
    c = server.client("boss")
    assert c.get("/no/such/route").status_code == 404
    _one_shape(c.get("/no/such/route"))
    wrong_method = c.delete("/v1/votes")
    assert wrong_method.status_code == 405
    _one_shape(wrong_method)
    bad_query = c.get("/v1/leaderboard", params={"style_control": "maybe"})
    assert bad_query.status_code == 422 and bad_query.json()["error"]["field"] == "style_control"
    _one_shape(server.client(None).get("/v1/pair"))  # 401


def test_duplicate_json_keys_are_refused_naming_the_key(server):
    voter = server.client("voter")
    pair = voter.get("/v1/pair").json()
    token = pair["battle"]
    body = f'{{"battle": "{token}", "winner": "model_a", "winner": "model_b"}}'.encode()
    r = voter.post("/v1/votes", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 422, r.text
    assert "'winner'" in _one_shape(r) and r.json()["error"]["field"] == "winner"
    loader = server.client("loader")
    record = b'[{"id": "dup-1", "model_a": "alpha", "model_b": "bravo", "model_b": "echo",'
    record += b' "winner": "model_a"}]'
    r = loader.post("/v1/battles", content=record, headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and "'model_b'" in _one_shape(r)
    again = voter.post("/v1/votes", json={"battle": pair["battle"], "winner": "tie"})
    assert again.status_code == 201  # the refused vote stored nothing: its token is unused


def test_both_post_routes_take_json_with_or_without_content_type(server):
    voter = server.client("voter")
    loader = server.client("loader")
    record = b'{"model_a": "alpha", "model_b": "bravo", "winner": "tie"}'
    for content_type in (None, "application/json", "application/json; charset=utf-8"):
        headers = {"Content-Type": content_type} if content_type else {}
        token = voter.get("/v1/pair").json()["battle"]
        vote = f'{{"battle": "{token}", "winner": "tie"}}'.encode()
        r = voter.post("/v1/votes", content=vote, headers=headers)
        assert r.status_code == 201, (content_type, r.text)
        r = loader.post("/v1/battles", content=record, headers=headers)
        assert r.status_code == 200, (content_type, r.text)
    token = voter.get("/v1/pair").json()["battle"]
    vote = f'{{"battle": "{token}", "winner": "tie"}}'.encode()
    for route, client, body in (("/v1/votes", voter, vote), ("/v1/battles", loader, record)):
        r = client.post(route, content=body, headers={"Content-Type": "text/plain"})
        assert r.status_code == 415, (route, r.text)
        assert "application/json" in _one_shape(r)


def test_if_none_match_uses_weak_comparison_lists_and_star(server):
    c = server.client("reader")
    etag = c.get("/v1/leaderboard").headers["etag"]
    assert etag.startswith('"')
    for header in (
        etag,
        "W/" + etag,
        f'"other", W/{etag}',
        f'"a,b",{etag}',
        "*",
    ):
        r = c.get("/v1/leaderboard", headers={"If-None-Match": header})
        assert r.status_code == 304, header
        assert r.headers["etag"] == etag
    for header in ('"other"', 'W/"other", "x"', etag[:-2] + '"'):
        assert c.get("/v1/leaderboard", headers={"If-None-Match": header}).status_code == 200


def test_an_unknown_source_is_refused_without_listing_key_names(server):
    voter = server.client("voter")
    # keys "voter" and "loader" have battles stored under their names as sources
    pair = voter.get("/v1/pair").json()
    vote = voter.post("/v1/votes", json={"battle": pair["battle"], "winner": "tie"})
    assert vote.status_code == 201
    batch = {"model_a": "alpha", "model_b": "bravo", "winner": "tie"}
    assert server.client("loader").post("/v1/battles", json=batch).status_code == 200
    for client, route in ((voter, "/v1/pair"), (server.client("reader"), "/v1/leaderboard")):
        r = client.get(route, params={"source": "nosuch"})
        assert r.status_code == 404, r.text
        message = _one_shape(r)
        for name in ("voter", "loader", "boss"):
            assert name not in message, message


@pytest.mark.parametrize(
    ("header", "matches"),
    [
        ('"abc"', True),
        ('W/"abc"', True),
        (' "x" , W/"abc" ', True),
        ('"a,b", "abc"', True),
        ("*", True),
        ('"abcd"', False),
        ('W/"x", "y"', False),
        ("abc", False),  # unquoted: malformed, matches nothing
        ("", False),
    ],
)
def test_none_match_compares_entity_tags_weakly(header, matches):
    from arena.serve.routes.boards import none_match

    assert none_match(header, '"abc"') is matches
