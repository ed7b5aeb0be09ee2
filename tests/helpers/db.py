"""Reading back what a command stored: row counts, battles, the count table, boards."""

from __future__ import annotations

import json

from sqlalchemy import create_engine, func, select

from arena.db.models import Battle, BattleCategory, BattleCount, Category, Model


def count(engine, model) -> int:
    """Rows of one table (an ORM class)."""
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(model)).scalar_one()


def stored(engine) -> tuple[list, list, list]:
    """(battles, category links, model names) as sorted plain tuples, ids replaced by names."""
    with engine.connect() as conn:
        names = dict(conn.execute(select(Model.id, Model.name)).all())
        cats = dict(conn.execute(select(Category.id, Category.name)).all())
        battles = sorted(
            (
                b.external_id,
                names[b.model_a_id],
                names[b.model_b_id],
                b.outcome,
                b.excluded_reason,
                b.weight,
            )
            for b in conn.execute(select(Battle)).all()
        )
        ext = dict(conn.execute(select(Battle.id, Battle.external_id)).all())
        links = sorted(
            (ext[bid], cats[cid])
            for cid, bid in conn.execute(
                select(BattleCategory.category_id, BattleCategory.battle_id)
            ).all()
        )
    return battles, links, sorted(names.values())


def counts(url: str) -> dict[tuple, int]:
    """The count table: cell key -> n."""
    eng = create_engine(url)
    with eng.connect() as conn:
        rows = conn.execute(
            select(
                BattleCount.category_id,
                BattleCount.model_a_id,
                BattleCount.model_b_id,
                BattleCount.outcome,
                BattleCount.weight,
                BattleCount.rated,
                BattleCount.n,
            )
        ).all()
    eng.dispose()
    return {tuple(r[:-1]): r[-1] for r in rows}


def recounted(run_cli, url: str) -> dict[tuple, int]:
    """The table as ``arena db recount`` rebuilds it from the battles."""
    assert "count table rebuilt" in run_cli("db", "recount", "-q").output
    return counts(url)


def leaderboards(run_cli, read: str) -> dict[str, str]:
    """Every board of one ``rebuild --all-categories``: its leaderboard JSON without the
    snapshot's id and creation time (the only fields two snapshots never share)."""
    out = run_cli("rebuild", "--all-categories", "--rounds", "40", "--read", read, "-q").output
    assert f"(read: {read})" in out, out
    docs = {}
    for line in out.splitlines():
        if line.startswith("snapshot "):
            sid, board = line.removeprefix("snapshot ").split(": ", 1)
            doc = json.loads(run_cli("leaderboard", "--snapshot", sid, "--format", "json").output)
            del doc["snapshot"]["id"], doc["snapshot"]["created_at"]
            docs[board] = json.dumps(doc, sort_keys=True)
    return docs


def battles_at(url: str) -> int:
    """Battles stored in the database at ``url`` (an engine of its own, disposed)."""
    from arena.db.session import open_engine

    engine = open_engine(url, migrate_new=False)
    try:
        return count(engine, Battle)
    finally:
        engine.dispose()
