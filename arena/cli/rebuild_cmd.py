"""``arena rebuild``: rate the stored battles and write snapshots (see :mod:`arena.jobs.rebuild`)."""

from __future__ import annotations

import click

from arena.cli.options import (
    category_option,
    declared,
    max_boards_option,
    quiet_option,
    rounds_option,
    style_control_option,
)
from arena.cli.output import warn
from arena.cli.progress import phase_reporter
from arena.core.options import RATING, option

#: Options whose click form is not the plain generated one.
_SPECIAL = {
    "rounds": rounds_option,  # the alias target of `arena eval --boot`
    "style_control": style_control_option(option("style_control").help),
    "style_features": declared("style_features", "--style-feature", "style_features"),
}
#: The rating options, in ``--help`` order, each generated from its declaration.
_FIT_OPTIONS = [_SPECIAL.get(name) or declared(name) for name in RATING] + [declared("max_models")]


def fit_options(command):
    """The rating options of ``rebuild`` (everything but the board selection), for
    every command that rebuilds boards (``rebuild``, ``nightly``)."""
    for decorate in reversed(_FIT_OPTIONS):
        command = decorate(command)
    return max_boards_option(command)


def fit_values(*, style_control=None, **fit) -> dict:
    """The front door's rating keywords from the values of :func:`fit_options`.

    ``--style-control`` unset means on (rebuild writes style boards).
    """
    return {**fit, "style_control": style_control != "off"}


@click.command("rebuild")
@category_option(option("category").help)
@declared("source")
@declared("since")
@declared("until")
@fit_options
@declared("all_categories")
@declared("all_sources")
@declared("exclude_flagged")
@declared("read")
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
        f"{len(result.snapshot_ids)} snapshot(s) up to battle {result.watermark} "
        f"in {result.seconds:.2f}s (read: {result.read})"
    )


COMMANDS = [rebuild_command]
