"""``arena rebuild``, ``leaderboard``, ``snapshots``, ``diff``, ``compare``."""

from __future__ import annotations

import math
import sys
from datetime import datetime

import click

from arena.cli.output import emit, format_option, quiet_option

LEADERBOARD_COLUMNS = ["rank_ub", "tier", "model", "rating", "minus", "plus", "battles", "flags"]


def _anchor(value: str | None) -> tuple[str, float] | None:
    if value is None:
        return None
    name, sep, rating = value.rpartition("=")
    try:
        if not sep or not name:
            raise ValueError
        return name, float(rating)
    except ValueError:
        raise click.BadParameter(
            f"{value!r}: expected MODEL=RATING, e.g. gpt-4o=1200", param_hint="--anchor"
        ) from None


def _when(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO date") from None


@click.command("rebuild")
@click.option("--category", help="Rate only battles of this category.")
@click.option("--source", help="Rate only battles of this source.")
@click.option("--since", help="Only battles at or after this ISO date/time.")
@click.option("--until", help="Only battles before this ISO date/time.")
@click.option("--rounds", type=int, default=1000, show_default=True, help="Bootstrap rounds.")
@click.option("--seed", type=int, default=None, help="Random seed [default: fixed, 20240501].")
@click.option("--level", type=float, default=0.95, show_default=True, help="Confidence level.")
@click.option(
    "--ci",
    type=click.Choice(["bootstrap", "sandwich", "fisher"]),
    default="bootstrap",
    show_default=True,
    help="Interval method.",
)
@click.option(
    "--simultaneous", is_flag=True, help="Intervals that hold for all models together (max-|t|)."
)
@click.option(
    "--ties",
    type=click.Choice(["half", "davidson"]),
    default="half",
    show_default=True,
    help="Ties as half wins (LMArena) or the Davidson tie model.",
)
@click.option(
    "--both-bad",
    type=click.Choice(["tie", "drop"]),
    default="tie",
    show_default=True,
    help="Treat 'both bad' votes as ties or leave them out.",
)
@click.option(
    "--position", is_flag=True, help="Also estimate a first-position (model_a) advantage."
)
@click.option("--anchor", help="Pin one model's rating, MODEL=RATING (default: mean 1000).")
@click.option(
    "--prior",
    type=float,
    default=None,
    help="Prior strength; 0 = pure MLE (error if it does not exist) [default: weak prior "
    "only when the MLE does not exist].",
)
@click.option(
    "--min-battles",
    type=int,
    default=50,
    show_default=True,
    help="Models with fewer battles are listed but not ranked.",
)
@click.option(
    "--tiers",
    "tiers",
    type=click.Choice(["maxt", "holm", "bh", "overlap"]),
    default="maxt",
    show_default=True,
    help="Tier method: paired bootstrap differences with max-t/Holm/BH correction, "
    "or leader-anchored interval overlap.",
)
@click.option(
    "--tier-rule",
    type=click.Choice(["leader", "cut"]),
    default="leader",
    show_default=True,
    help="Paired tiers: split from the tier leader, or only where every pair across "
    "the cut differs (stricter).",
)
@click.option(
    "--cluster",
    type=click.Choice(["battle", "judge", "question", "source"]),
    default="battle",
    show_default=True,
    help="Resampling unit of the bootstrap.",
)
@click.option(
    "--all-categories", is_flag=True, help="Also build one snapshot per category, in the same run."
)
@click.option(
    "--max-models",
    type=click.IntRange(min=2),
    default=2000,
    show_default=True,
    help="Refuse a board with more models than this (a guard against an accidental huge board).",
)
@quiet_option
@click.pass_obj
def rebuild_command(
    app,
    category,
    source,
    since,
    until,
    rounds,
    seed,
    level,
    ci,
    simultaneous,
    ties,
    both_bad,
    position,
    anchor,
    prior,
    min_battles,
    tiers,
    tier_rule,
    cluster,
    all_categories,
    max_models,
    quiet,
):
    """Fit ratings with intervals, ranks and tiers; store them as a new snapshot.

    Reads battles up to the current largest battle id (the watermark) in one
    transaction, aggregates them in SQL, fits Bradley-Terry ratings and writes
    one immutable snapshot per board. A failed rebuild writes nothing.

    \b
    Example:
        arena rebuild
        arena rebuild --all-categories --rounds 2000 --seed 7
        arena rebuild --category math --cluster judge --tiers holm
    """
    from arena.db.session import DatabaseError  # noqa: F401  (import errors surface early)
    from arena.rebuild import DEFAULT_SEED, RebuildError, RebuildOptions, rebuild

    opts = RebuildOptions(
        category=category,
        source=source,
        since=_when(since),
        until=_when(until),
        rounds=rounds,
        seed=DEFAULT_SEED if seed is None else seed,
        level=level,
        ci=ci,
        simultaneous=simultaneous,
        ties=ties,
        both_bad=both_bad,
        position=position,
        anchor=_anchor(anchor),
        prior=prior,
        min_battles=min_battles,
        tiers=tiers,
        tier_rule=tier_rule,
        cluster=cluster,
    )
    engine = app.engine()

    def progress(message: str) -> None:
        if not quiet and sys.stderr.isatty():
            click.echo(message, err=True)

    try:
        result = rebuild(
            engine, opts, all_categories=all_categories, progress=progress, max_models=max_models
        )
    except RebuildError as exc:
        raise click.ClickException(f"{exc}; no snapshot was written") from None
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    for sid, board in zip(result.snapshot_ids, result.boards, strict=True):
        click.echo(f"snapshot {sid}: {board}")
    click.echo(
        f"{len(result.snapshot_ids)} snapshot(s) up to battle {result.watermark} "
        f"in {result.seconds:.2f}s"
    )


def _resolve_snapshot(conn, snapshot_id: int | None, category: str | None):
    from arena.snapshots import board_key, latest_snapshot_id, load_board

    if snapshot_id is None:
        key = board_key(category=category)
        snapshot_id = latest_snapshot_id(conn, key)
        if snapshot_id is None:
            raise click.ClickException(f"no snapshot for board {key!r} yet: run `arena rebuild`")
    board = load_board(conn, snapshot_id)
    if board is None:
        raise click.ClickException(f"no snapshot {snapshot_id}")
    return board


def _fmt(x: float) -> float:
    return round(x, 1)


@click.command("leaderboard")
@click.option("--snapshot", "snapshot_id", type=int, help="Snapshot id [default: latest].")
@click.option("--category", help="Show the latest snapshot of this category's board.")
@click.option("--all", "show_all", is_flag=True, help="Include hidden models.")
@format_option
@click.pass_obj
def leaderboard_command(app, snapshot_id, category, show_all, fmt):
    """Show a snapshot: rank (UB), tier, rating with its interval, battles.

    Rank (UB) is 1 + the number of models whose whole interval lies above
    this model's. Models in one tier are not ranked against each other.

    \b
    Example:
        arena leaderboard
        arena leaderboard --category math --format json
    """
    from arena.snapshots import ROW_FIELDS

    with app.engine().connect() as conn:
        board = _resolve_snapshot(conn, snapshot_id, category)
    doc = board.document(include_hidden=show_all)
    if fmt == "table":
        s = doc["snapshot"]
        opts = s["options"]
        click.echo(
            f"snapshot {s['id']} ({s['board']}) {s['created_at'][:19]}  "
            f"{int(s['counts']['battles'])} battles, {s['counts']['models']} models, "
            f"{opts.get('ci')} {round(100 * opts.get('level', 0.95))}% intervals, "
            f"tiers: {opts.get('tiers')}"
        )
        rows = [
            dict(
                rank_ub=r["rank_ub"] if r["rank_ub"] is not None else "-",
                tier=r["tier"] if r["tier"] is not None else "-",
                model=r["model"],
                rating=_fmt(r["rating"]),
                minus=_fmt(r["rating"] - r["ci_low"]),
                plus=_fmt(r["ci_high"] - r["rating"]),
                battles=r["battles"],
                flags=",".join(r["flags"]),
            )
            for r in doc["rows"]
        ]
        emit(rows, LEADERBOARD_COLUMNS, "table")
        if s["hidden_models"] and not show_all:
            click.echo(f"({s['hidden_models']} hidden model(s) not shown; --all shows them)")
    else:
        emit(doc["rows"], list(ROW_FIELDS), fmt, json_obj=doc)


@click.command("snapshots")
@format_option
@click.pass_obj
def snapshots_command(app, fmt):
    """List snapshots, newest last.

    \b
    Example:
        arena snapshots --format json
    """
    from arena.snapshots import list_snapshots

    with app.engine().connect() as conn:
        snaps = list_snapshots(conn)
    rows = [
        dict(
            id=s.id,
            created_at=s.created_at.isoformat()[:19],
            board=s.board,
            models=s.n_models,
            battles=int(s.n_battles),
            watermark=s.watermark,
            method=s.options.get("ci"),
            rounds=s.options.get("rounds"),
            seed=s.seed,
        )
        for s in snaps
    ]
    emit(
        rows,
        ["id", "created_at", "board", "models", "battles", "watermark", "method", "rounds", "seed"],
        fmt,
    )


@click.command("diff")
@click.argument("old", type=int)
@click.argument("new", type=int)
@format_option
@click.pass_obj
def diff_command(app, old, new, fmt):
    """Show what moved between two snapshots: rating, rank (UB) and tier changes.

    \b
    Example:
        arena diff 3 4
    """
    from arena.snapshots import load_board

    with app.engine().connect() as conn:
        a, b = load_board(conn, old), load_board(conn, new)
    for sid, board in ((old, a), (new, b)):
        if board is None:
            raise click.ClickException(f"no snapshot {sid}")
    before = {r.model: r for r in a.rows}
    after = {r.model: r for r in b.rows}
    rows = []
    for r in b.rows:
        p = before.get(r.model)
        rows.append(
            dict(
                model=r.model,
                status="new" if p is None else "",
                rating=_fmt(r.rating),
                d_rating=None if p is None else _fmt(r.rating - p.rating),
                rank_ub=r.rank_ub,
                old_rank_ub=None if p is None else p.rank_ub,
                tier=r.tier,
                old_tier=None if p is None else p.tier,
            )
        )
    for name, p in before.items():
        if name not in after:
            rows.append(
                dict(
                    model=name,
                    status="gone",
                    rating=None,
                    d_rating=None,
                    rank_ub=None,
                    old_rank_ub=p.rank_ub,
                    tier=None,
                    old_tier=p.tier,
                )
            )
    emit(
        rows,
        ["model", "status", "rating", "d_rating", "rank_ub", "old_rank_ub", "tier", "old_tier"],
        fmt,
    )


@click.command("compare")
@click.argument("model_a")
@click.argument("model_b")
@click.option("--snapshot", "snapshot_id", type=int, help="Snapshot id [default: latest].")
@click.option("--category", help="Use the latest snapshot of this category's board.")
@format_option
@click.pass_obj
def compare_command(app, model_a, model_b, snapshot_id, category, fmt):
    """Head-to-head verdict: is MODEL_A really better than MODEL_B?

    Gives the rating difference with its paired bootstrap interval, the
    predicted win probability, P(A better than B) over bootstrap rounds and
    the direct record between the two.

    \b
    Example:
        arena compare gemini-2.5-pro o3-2025-04-16
    """
    from arena.engine.tiers import compare_pair
    from arena.snapshots import load_pairs, load_samples

    with app.engine().connect() as conn:
        board = _resolve_snapshot(conn, snapshot_id, category)
        samples = load_samples(conn, board.snapshot.id)
        pairs = load_pairs(conn, board.snapshot.id)
    rows = {r.model: r for r in board.rows}
    for name in (model_a, model_b):
        if name not in rows:
            raise click.ClickException(f"model {name!r} is not in snapshot {board.snapshot.id}")
    if model_a == model_b:
        raise click.ClickException("compare two different models")
    ra, rb = rows[model_a], rows[model_b]
    import numpy as np

    rating = np.zeros(samples.shape[1])
    rating[ra.position], rating[rb.position] = ra.rating, rb.rating
    level = float(board.snapshot.options.get("level", 0.95))
    c = compare_pair(
        samples.astype(np.float64), ra.position, rb.position, rating=rating, level=level
    )
    wins_a = wins_b = ties = 0.0
    for p in pairs:
        if {p.model_a, p.model_b} == {model_a, model_b}:
            flip = p.model_a != model_a
            wins_a, wins_b = (p.b_wins, p.a_wins) if flip else (p.a_wins, p.b_wins)
            ties = p.ties
    # The direction comes from the paired interval itself, not the point difference.
    verdict = (
        f"{model_a} is better"
        if c.low > 0
        else f"{model_b} is better"
        if c.high < 0
        else "not distinguishable at this level"
    )
    doc = dict(
        snapshot=board.snapshot.id,
        model_a=model_a,
        model_b=model_b,
        rating_a=ra.rating,
        rating_b=rb.rating,
        difference=c.diff,
        ci_low=c.low,
        ci_high=c.high,
        level=level,
        p_a_better=c.p_better,
        win_probability_a=c.win_prob,
        significant=bool(c.significant),
        verdict=verdict,
        record={"a_wins": wins_a, "b_wins": wins_b, "ties": ties},
    )
    if fmt == "json":
        emit([], [], "json", json_obj=doc)
        return
    if fmt == "csv":
        flat = {k: v for k, v in doc.items() if k != "record"}
        flat.update(a_wins=wins_a, b_wins=wins_b, ties=ties)
        emit([flat], list(flat), "csv")
        return
    pct = round(100 * level)
    n = wins_a + wins_b + ties
    click.echo(f"{model_a} vs {model_b} (snapshot {board.snapshot.id})")
    click.echo(
        f"  rating difference  {c.diff:+.1f}  ({pct}% paired interval "
        f"{c.low:+.1f} to {c.high:+.1f})"
    )
    click.echo(f"  P({model_a} better) {c.p_better:.3f} over bootstrap rounds")
    click.echo(f"  predicted win probability of {model_a}: {c.win_prob:.3f}")
    record = f"{int(wins_a)} wins, {int(wins_b)} losses, {int(ties)} ties" if n else "never met"
    click.echo(f"  direct record: {record}")
    click.echo(f"  verdict: {verdict}")
    if not math.isfinite(c.low):
        click.echo("  (interval not available)")


COMMANDS = [rebuild_command, leaderboard_command, snapshots_command, diff_command, compare_command]
