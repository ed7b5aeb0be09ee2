"""`arena serve`: a real server process on loopback, against SQLite and PostgreSQL.

Every status code the API promises, the pair -> vote flow, replayed / expired /
forged tokens, scopes, batch atomicity, ETags, rate limits, and a kill -9 under
load after which acknowledged <= stored <= sent, with no vote stored twice.
"""

from __future__ import annotations

import json
import signal
import threading
import time

import pytest

httpx = pytest.importorskip("httpx", reason="arena[serve] / the test extra installs httpx")
pytest.importorskip("fastapi", reason="arena[serve] installs fastapi")

from sqlalchemy import select  # noqa: E402

from tests.helpers.cli import cli_for  # noqa: E402
from tests.helpers.postgres import pg_schema  # noqa: E402
from tests.helpers.serve import (  # noqa: E402
    MODELS,
    Server,
    counts_current,
    pair_and_vote,
    prepare,
    start,
    stop,
    stored_votes,
)

pytestmark = pytest.mark.slow  # a real server process


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve")
    if request.param == "sqlite":
        urls = iter([f"sqlite:///{tmp / 'arena.db'}"])
    else:
        urls = pg_schema()
    url = next(urls)
    keys = prepare(url, tmp)
    proc, base = start(url, "--seed", "11")
    yield Server(url, base, proc, keys)
    stop(proc)
    next(urls, None)


def test_health_metrics_and_docs_need_no_key(server):
    c = server.client(None)
    health = c.get("/healthz").json()
    assert health["status"] == "ok" and health["revision"]
    assert "arena_requests_total" in c.get("/metrics").text
    assert c.get("/openapi.json").json()["paths"]["/v1/votes"]["post"]
    assert c.get("/docs").status_code == 200


def test_keys_scopes_and_revocation(server):
    for path in ("/v1/pair", "/v1/leaderboard", "/v1/models"):
        r = server.client(None).get(path)
        assert r.status_code == 401 and "bearer" in r.json()["error"]["message"]
        assert r.headers["www-authenticate"] == "Bearer"
    assert server.client("gone").get("/v1/pair").status_code == 401  # revoked
    bad = httpx.get(server.base + "/v1/pair", headers={"Authorization": "Bearer arena_nope"})
    assert bad.status_code == 401
    assert server.client("reader").get("/v1/pair").status_code == 403
    assert server.client("voter").get("/v1/leaderboard").status_code == 403
    r = server.client("voter").post("/v1/battles", json=[])
    assert r.status_code == 403 and "'ingest'" in r.json()["error"]["message"]
    assert server.client("boss").get("/v1/pair").status_code == 200  # admin may do all


def test_pair_vote_flow_stores_the_shown_pair(server):
    c = server.client("voter")
    before = set(stored_votes(server.url))
    pair, vote = pair_and_vote(c, "model_b")
    assert vote.status_code == 201, vote.text
    assert pair["model_a"] in MODELS and pair["model_b"] in MODELS
    assert pair["model_a"] != pair["model_b"] and pair["expires_at"].endswith("Z")
    new = set(stored_votes(server.url)) - before
    assert new == {vote.json()["id"]}
    # stored as the pair shown, with the key as its source, and counted like an ingest
    from arena.db.models import Battle, Model
    from arena.db.session import open_engine

    engine = open_engine(server.url, migrate_new=False)
    with engine.connect() as conn:
        row = conn.execute(
            select(Battle.outcome, Battle.source, Model.name)
            .join(Model, Model.id == Battle.model_a_id)
            .where(Battle.external_id == vote.json()["id"])
        ).one()
    engine.dispose()
    assert row == ("b_wins", "voter", pair["model_a"])
    assert counts_current(server.url)
    doc = server.client("reader").get("/v1/models").json()
    import arena

    with arena.open(server.url) as db:
        assert doc == db.models().to_dict()  # the front door's document (= the CLI's)
    models = {m["model"]: m for m in doc["models"]}
    assert models[pair["model_a"]]["battles"] >= 1


def test_replayed_expired_forged_and_foreign_tokens_store_nothing(server):
    c = server.client("voter")
    pair, vote = pair_and_vote(c)
    assert vote.status_code == 201
    before = len(stored_votes(server.url))
    again = c.post("/v1/votes", json={"battle": pair["battle"], "winner": "model_b"})
    assert again.status_code == 409 and "used already" in again.json()["error"]["message"]
    head, sig = c.get("/v1/pair").json()["battle"].split(".")
    forged = c.post("/v1/votes", json={"battle": head + "." + sig[::-1], "winner": "tie"})
    assert forged.status_code == 403
    garbage = c.post("/v1/votes", json={"battle": "not-a-token", "winner": "tie"})
    assert garbage.status_code == 403
    # a genuinely signed token whose time is up
    from arena.db.session import open_engine
    from arena.serve.tokens import TokenSigner, load_secret

    engine = open_engine(server.url, migrate_new=False)
    signer = TokenSigner(load_secret(engine), ttl=60)
    engine.dispose()
    voter_id = 1  # keys are numbered from 1 in creation order: "voter" came first
    token, _ = signer.issue("alpha", "bravo", key_id=voter_id, now=time.time() - 3600)
    expired = c.post("/v1/votes", json={"battle": token, "winner": "tie"})
    assert expired.status_code == 410 and "expired" in expired.json()["error"]["message"]
    # a token issued to another key
    mine = server.client("boss").get("/v1/pair").json()["battle"]
    foreign = c.post("/v1/votes", json={"battle": mine, "winner": "tie"})
    assert foreign.status_code == 403 and "another key" in foreign.json()["error"]["message"]
    bad_winner = c.post("/v1/votes", json={"battle": mine, "winner": "left"})
    assert bad_winner.status_code == 422 and bad_winner.json()["error"]["field"] == "winner"
    # the body checked as the documented VoteIn schema: 422 naming the field
    for body, field in [
        ({"winner": "tie"}, "battle"),
        ({"battle": 7, "winner": "tie"}, "battle"),
        ({"battle": mine, "winner": "tie", "voter": 3}, "voter"),
        ({"battle": mine, "winner": "tie", "conv_metadata": [1]}, "conv_metadata"),
        ([mine], None),
    ]:
        r = c.post("/v1/votes", json=body)
        assert r.status_code == 422 and r.json()["error"]["field"] == field, (body, r.text)
    r = c.post("/v1/votes", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and r.json()["error"]["field"] is None
    assert len(stored_votes(server.url)) == before
    assert 'method="POST",route="/v1/votes",status="409"' in c.get("/metrics").text


def test_battle_batches_are_atomic_and_deduplicated(server):
    c = server.client("loader")
    batch = [
        {"id": "b-1", "model_a": "alpha", "model_b": "bravo", "winner": "model_a"},
        {"id": "b-2", "model_a": "newcomer", "model_b": "alpha", "winner": "tie"},
    ]
    r = c.post("/v1/battles", json=batch)
    assert r.status_code == 200 and r.json() == {"inserted": 2, "duplicates": 0}, r.text
    again = c.post("/v1/battles", json=batch)
    assert again.json() == {"inserted": 0, "duplicates": 2}
    one = c.post("/v1/battles", json={"model_a": "alpha", "model_b": "echo", "winner": "model_b"})
    assert one.json() == {"inserted": 1, "duplicates": 0}
    # same id, other content: 409 and nothing of the request stored
    conflict = [
        {"id": "b-3", "model_a": "alpha", "model_b": "bravo", "winner": "model_a"},
        {"id": "b-1", "model_a": "alpha", "model_b": "bravo", "winner": "model_b"},
    ]
    r = c.post("/v1/battles", json=conflict)
    assert r.status_code == 409 and r.json()["error"]["index"] == 1
    # an invalid record: 422 naming its index and field, nothing stored
    invalid = [
        {"id": "b-4", "model_a": "alpha", "model_b": "bravo", "winner": "model_a"},
        {"id": "b-5", "model_a": "alpha", "model_b": "bravo", "winner": "maybe"},
    ]
    r = c.post("/v1/battles", json=invalid)
    err = r.json()["error"]
    assert r.status_code == 422 and err["index"] == 1 and err["field"] == "winner"
    again = c.post(
        "/v1/battles",
        json=[
            {"id": x, "model_a": "alpha", "model_b": "bravo", "winner": "model_a"}
            for x in ("b-3", "b-4")
        ],
    )
    assert again.json() == {"inserted": 2, "duplicates": 0}  # neither was stored before
    assert counts_current(server.url)


def test_leaderboard_is_the_cli_document_with_an_etag(server):
    c = server.client("reader")
    r = c.get("/v1/leaderboard")
    assert r.status_code == 200
    cli_doc = json.loads(cli_for(server.url)("leaderboard", "--format", "json").output)
    assert r.json() == cli_doc
    etag = r.headers["etag"]
    again = c.get("/v1/leaderboard", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    missing = c.get("/v1/leaderboard", params={"category": "no-such-category"})
    assert missing.status_code == 404 and "category" in missing.json()["error"]["message"]


def test_rate_limit_answers_429_with_retry_after(server):
    c = server.client("slow")  # 1 request a second, bursts of 2
    codes = [c.get("/v1/pair").status_code for _ in range(4)]
    assert codes[:2] == [200, 200] and 429 in codes[2:]
    limited = next(r for r in (c.get("/v1/pair") for _ in range(3)) if r.status_code == 429)
    assert int(limited.headers["retry-after"]) >= 1


def test_request_size_limits(server):
    c = server.client("loader")
    huge = c.post(
        "/v1/battles",
        content=b"[" + b" " * (9 * 1024 * 1024) + b"]",
        headers={"content-type": "application/json"},
    )
    assert huge.status_code == 413
    many = [{"model_a": "alpha", "model_b": "bravo", "winner": "tie"}] * 10_001
    r = c.post("/v1/battles", json=many)
    assert r.status_code == 413 and "10000" in r.json()["error"]["message"]


def _load(base: str, token: str, done: threading.Event, sent: list, acked: list) -> None:
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=10) as c:
        while not done.is_set():
            try:
                pair = c.get("/v1/pair").json()
                ticket = pair["battle"]
                from arena.serve.tokens import _unb64

                ticket_id = "vote:" + json.loads(_unb64(ticket.split(".")[0]))["i"]
                sent.append(ticket_id)
                r = c.post("/v1/votes", json={"battle": ticket, "winner": "model_a"})
            except (httpx.HTTPError, KeyError, ValueError):
                return
            if r.status_code == 201:
                acked.append(r.json()["id"])


@pytest.mark.parametrize("how", ["kill", "term"])
def test_killed_or_stopped_under_load_loses_no_acknowledged_vote(how, db_url, tmp_path):
    keys = prepare(db_url, tmp_path)
    proc, base = start(db_url, "--seed", "5")
    done = threading.Event()
    sent: list[str] = []
    acked: list[str] = []
    threads = [
        threading.Thread(target=_load, args=(base, keys["voter"], done, sent, acked))
        for _ in range(8)
    ]
    try:
        for t in threads:
            t.start()
        deadline = time.monotonic() + 90
        while len(acked) < 100 and time.monotonic() < deadline:
            time.sleep(0.05)
        if how == "kill":
            proc.send_signal(signal.SIGKILL)
        else:
            proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    finally:
        done.set()
        for t in threads:
            t.join(30)
        stop(proc)
    stored = stored_votes(db_url)
    assert len(acked) >= 100, f"only {len(acked)} votes acknowledged in 90 s"
    assert len(stored) == len(set(stored)), "a vote was stored twice"
    assert set(acked) <= set(stored), f"{len(set(acked) - set(stored))} acknowledged votes lost"
    assert set(stored) <= set(sent)
    if how == "term":
        # uvicorn drains, shuts the app down (the writer stores what is queued), then
        # re-raises SIGTERM so a process manager sees why it stopped
        assert proc.returncode in (0, -signal.SIGTERM)
    assert counts_current(db_url)


def test_sampling_ledger_counts_the_pairs_served(server):
    """``GET /v1/sampling``: pairs handed out reach the ledger (workers add their counts
    every few seconds; the document is cached for seconds), shares add up."""
    import time as _time

    reader, voter = server.client("reader"), server.client("voter")
    before = reader.get("/v1/sampling")
    assert before.status_code == 200, before.text
    for _ in range(40):
        assert voter.get("/v1/pair").status_code == 200
    deadline = _time.monotonic() + 40
    doc = before.json()
    while doc["served"] < before.json()["served"] + 40 and _time.monotonic() < deadline:
        _time.sleep(1)
        doc = reader.get("/v1/sampling").json()
    assert doc["served"] >= before.json()["served"] + 40
    assert sum(m["served"] for m in doc["models"]) == 2 * doc["served"] == 2 * sum(doc["drawn_by"].values())  # fmt: skip
    assert sum(m["share"] for m in doc["models"]) == pytest.approx(1.0)
    missing = reader.get("/v1/sampling", params={"source": "nope"})
    assert missing.status_code == 404 and "nope" in missing.json()["error"]["message"]
    assert voter.get("/v1/sampling").status_code == 403  # a vote key reads no ledger
