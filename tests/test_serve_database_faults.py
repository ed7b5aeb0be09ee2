"""`arena serve` when the database is busy or drops its connections, on both engines.

``--wait`` bounds how long a request waits for the write lock: then 503 with
``Retry-After`` and nothing stored.  After PostgreSQL terminated the server's
connections, the next request of each kind succeeds (the pool reconnects);
a database failure that remains is 503 in the one error shape, no traceback.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx", reason="arena[serve] / the test extra installs httpx")
pytest.importorskip("fastapi", reason="arena[serve] installs fastapi")

from sqlalchemy import create_engine, text  # noqa: E402
from sqlalchemy.exc import OperationalError  # noqa: E402

from arena.serve.errors import database_failure  # noqa: E402
from tests.helpers.postgres import pg_url  # noqa: E402
from tests.helpers.serve import prepare, start, stop  # noqa: E402


class _Held:
    """The database's write lock, held from outside the server (another command)."""

    def __init__(self, url: str) -> None:
        from arena.db.session import open_engine

        self.engine = open_engine(url, migrate_new=False)
        self.conn = self.engine.connect()
        if self.conn.dialect.name == "sqlite":
            self.conn.exec_driver_sql("BEGIN IMMEDIATE")
        else:  # the battle-id lock every ingest and the server's writer take
            from arena.db.advisory import advisory_key

            self.key = advisory_key(self.conn, "battle-ids")
            self.conn.exec_driver_sql("SELECT pg_advisory_lock(%(k)s)", {"k": self.key})

    def release(self) -> None:
        if self.conn.dialect.name == "sqlite":
            self.conn.exec_driver_sql("ROLLBACK")
        else:
            self.conn.exec_driver_sql("SELECT pg_advisory_unlock(%(k)s)", {"k": self.key})
        self.conn.close()
        self.engine.dispose()


@pytest.mark.slow
def test_a_write_waits_at_most_wait_then_gets_503(db_url, tmp_path):
    keys = prepare(db_url, tmp_path)
    proc, base = start(db_url, "--wait", "1")
    try:
        c = httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {keys['voter']}"}, timeout=30
        )
        token = c.get("/v1/pair").json()["battle"]
        held = _Held(db_url)
        try:
            started = time.monotonic()
            r = c.post("/v1/votes", json={"battle": token, "winner": "tie"})
            waited = time.monotonic() - started
        finally:
            held.release()
        assert r.status_code == 503, r.text
        assert int(r.headers["retry-after"]) >= 1
        assert set(r.json()) == {"error"} and "--wait" in r.json()["error"]["message"]
        assert waited < 10, waited
        again = c.post("/v1/votes", json={"battle": token, "winner": "tie"})
        assert again.status_code == 201, again.text  # the 503 stored nothing
    finally:
        stop(proc)


def _postgres_ports(pid: int) -> list[int]:
    """Local ports of the TCP connections process ``pid`` holds to PostgreSQL (5432)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = fd.readlink().as_posix()
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, inode = fields[1], fields[2], fields[9]
            if inode in inodes and int(remote.rsplit(":", 1)[1], 16) == 5432:
                ports.append(int(local.rsplit(":", 1)[1], 16))
    return ports


@pytest.mark.slow
def test_requests_after_postgres_dropped_the_connections_succeed(db_url, tmp_path):
    if not db_url.startswith("postgresql"):
        pytest.skip("PostgreSQL drops connections; an SQLite file has none to drop")
    keys = prepare(db_url, tmp_path)
    proc, base = start(db_url)
    try:
        voter = httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {keys['voter']}"}, timeout=30
        )
        reader = httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {keys['reader']}"}, timeout=30
        )
        tokens = [voter.get("/v1/pair").json()["battle"] for _ in range(3)]
        assert voter.post("/v1/votes", json={"battle": tokens[0], "winner": "tie"}).is_success
        assert reader.get("/v1/models").is_success
        ports = _postgres_ports(proc.pid)
        assert ports, "the server holds no PostgreSQL connection"
        admin = create_engine(pg_url(), isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            dropped = conn.execute(
                text(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE client_port = ANY(:ports) AND pid <> pg_backend_pid()"
                ),
                {"ports": ports},
            ).scalar()
        admin.dispose()
        assert dropped >= 1
        vote = voter.post("/v1/votes", json={"battle": tokens[1], "winner": "tie"})
        assert vote.status_code == 201, vote.text
        models = reader.get("/v1/models")
        assert models.status_code == 200, models.text
        assert httpx.get(base + "/healthz", timeout=10).status_code == 200
    finally:
        stop(proc)


def test_a_lost_connection_that_remains_is_503_in_the_one_shape():
    lost = OperationalError(
        "SELECT 1", {}, Exception("terminating connection due to administrator command")
    )
    answer = database_failure(lost)
    assert answer is not None and answer.status == 503
    assert answer.headers["Retry-After"] == "1" and "connection" in answer.body["message"]
    locked = OperationalError("BEGIN IMMEDIATE", {}, Exception("database is locked"))
    assert database_failure(locked).status == 503
    assert database_failure(ValueError("a bug")) is None
