"""``arena rebuild``: rate the stored battles and write snapshots (see :mod:`arena.jobs.rebuild`)."""

from __future__ import annotations

import click

from arena.cli.options import (
    category_option,
    level_option,
    max_boards_option,
    quiet_option,
    rounds_option,
    seed_option,
    style_control_option,
)
from arena.cli.output import warn
from arena.cli.progress import phase_reporter
from arena.core.defaults import DEFAULT_MAX_MODELS, DEFAULT_MIN_BATTLES

_FIT_OPTIONS = [
    rounds_option,
    seed_option,
    level_option,
    click.option(
        "--ci",
        type=click.Choice(["bootstrap", "sandwich", "fisher"]),
        default="bootstrap",
        show_default=True,
        help="Interval method.",
    ),
    click.option(
        "--simultaneous",
        is_flag=True,
        help="Intervals that hold for all models together (max-|t|).",
    ),
    click.option(
        "--ties",
        type=click.Choice(["half", "davidson"]),
        default="half",
        show_default=True,
        help="Ties as half wins (LMArena) or the Davidson tie model.",
    ),
    click.option(
        "--both-bad",
        type=click.Choice(["tie", "drop"]),
        default="tie",
        show_default=True,
        help="Treat 'both bad' votes as ties or leave them out.",
    ),
    click.option(
        "--position", is_flag=True, help="Also estimate a first-position (model_a) advantage."
    ),
    click.option("--anchor", help="Pin one model's rating, MODEL=RATING (default: mean 1000)."),
    click.option(
        "--prior",
        type=float,
        default=None,
        help="Prior strength; 0 = pure MLE (error if it does not exist) [default: weak prior "
        "only when the MLE does not exist].",
    ),
    click.option(
        "--min-battles",
        type=int,
        default=DEFAULT_MIN_BATTLES,
        show_default=True,
        help="Models with fewer battles are listed but not ranked.",
    ),
    click.option(
        "--tiers",
        "tiers",
        type=click.Choice(["simultaneous", "maxt", "holm", "bh", "overlap"]),
        default="simultaneous",
        show_default=True,
        help="Tier method: simultaneous = from the board's one inference (the test behind "
        "its rank sets and verdicts: a tier's top model is shown better than every model "
        "in lower tiers); or, for comparison, paired bootstrap tiers with max-t/Holm/BH "
        "correction, or leader-anchored interval overlap.",
    ),
    click.option(
        "--tier-rule",
        type=click.Choice(["leader", "cut"]),
        default="leader",
        show_default=True,
        help="Tiers maxt/holm/bh: split from the tier leader, or only where every pair "
        "across the cut differs (stricter). Not used by --tiers simultaneous.",
    ),
    click.option(
        "--cluster",
        type=click.Choice(["battle", "judge", "question", "source"]),
        default="battle",
        show_default=True,
        help="Resampling unit of the bootstrap.",
    ),
    style_control_option(
        "Also write a style-controlled board for every board whose battles carry style "
        "metadata (battles without it are left out of that board and counted) [default: on]."
    ),
    click.option(
        "--style-feature",
        "style_features",
        multiple=True,
        help="Add a user covariate ingested per side (NAME_a/NAME_b) to the style model; "
        "repeatable.",
    ),
    click.option(
        "--style-reg",
        type=float,
        default=None,
        help="LMArena's L2 penalty on the style fit (their published numbers use 0.5) "
        "[default: none, the exact MLE].",
    ),
    click.option(
        "--components",
        type=click.Choice(["largest", "separate"]),
        default="largest",
        show_default=True,
        help="When some models never met the others (directly or through others): rank the "
        "largest comparable set and list the rest unranked, or also write one board per "
        "other set (key BOARD|component:N, N = 2, 3, ...; see `arena leaderboard --component`).",
    ),
    click.option(
        "--max-models",
        type=click.IntRange(min=2),
        default=DEFAULT_MAX_MODELS,
        show_default=True,
        help="Refuse a board with more models than this (a guard against an accidental huge "
        "board, such as a model column holding prompt ids). Boards of 1500 models or more "
        "are rated on the sparse path (10,000 models, 1000 rounds: ~30 s, ~1 GB).",
    ),
]


def fit_options(command):
    """The rating options of ``rebuild`` (everything but the board selection), for
    every command that rebuilds boards (``rebuild``, ``nightly``)."""
    for option in reversed(_FIT_OPTIONS):
        command = option(command)
    return max_boards_option(command)


def fit_values(*, style_control=None, **fit) -> dict:
    """The front door's rating keywords from the values of :func:`fit_options`.

    ``--style-control`` unset means on (rebuild writes style boards).
    """
    return {**fit, "style_control": style_control != "off"}


@click.command("rebuild")
@category_option("Rate only battles of this category.")
@click.option("--source", help="Rate only battles of this source.")
@click.option("--since", help="Only battles at or after this ISO date/time.")
@click.option("--until", help="Only battles before this ISO date/time.")
@fit_options
@click.option(
    "--all-categories", is_flag=True, help="Also build one snapshot per category, in the same run."
)
@click.option(
    "--all-sources",
    is_flag=True,
    help="Also build one board per source (`arena ingest --source`), so votes and judge "
    "verdicts are rated apart; with --all-categories each source gets its categories too.",
)
@click.option(
    "--exclude-flagged",
    is_flag=True,
    help="Leave out the judges flagged by the stored audit of the board's latest snapshot "
    "(`arena audit`); recorded in the snapshot.",
)
@click.option(
    "--read",
    type=click.Choice(["auto", "counts", "battles"]),
    default="auto",
    show_default=True,
    help="Read the count table (kept by every ingest; fast at any number of battles) or "
    "aggregate the battles; auto reads the counts unless --since/--until, --source, "
    "--cluster or --exclude-flagged need the battles. Both give the same snapshot.",
)
@quiet_option
@click.pass_obj
def rebuild_command(
    app,
    category,
    source,
    since,
    until,
    all_categories,
    all_sources,
    exclude_flagged,
    max_models,
    max_boards,
    read,
    quiet,
    **fit,
):
    """Fit ratings with intervals, ranks and tiers; store them as a new snapshot.

    Reads battles up to the current largest battle id (the watermark) in one
    transaction -- from the count table that every ingest keeps, or aggregated
    from the battles in SQL when the options need them (see --read) -- fits Bradley-Terry ratings and writes
    one immutable snapshot per board. A failed rebuild writes nothing.

    \b
    Example:
        arena rebuild
        arena rebuild --all-categories --rounds 2000 --seed 7
        arena rebuild --all-sources
        arena rebuild --category math --tiers holm
        arena rebuild --components separate --all-categories
        arena rebuild --style-reg 0.5 --style-feature sentiment
        arena audit && arena rebuild --exclude-flagged
        arena rebuild --read battles
    """
    result = app.arena().rebuild(
        category=category,
        source=source,
        since=since,
        until=until,
        all_categories=all_categories,
        all_sources=all_sources,
        exclude_flagged=exclude_flagged,
        max_models=max_models,
        max_boards=max_boards,
        read=read,
        progress=phase_reporter(quiet=quiet),
        **fit_values(**fit),
    )
    for warning in result.warnings:
        warn(warning)
    if exclude_flagged:
        excluded = result.excluded_judges
        click.echo(f"left out {len(excluded)} flagged judge(s): {', '.join(excluded) or 'none'}")
    for sid, board in zip(result.snapshot_ids, result.boards, strict=True):
        click.echo(f"snapshot {sid}: {board}")
    click.echo(
        f"{len(result.snapshot_ids)} snapshot(s) up to battle {result.result.watermark} "
        f"in {result.result.seconds:.2f}s (read: {result.result.read})"
    )


COMMANDS = [rebuild_command]
