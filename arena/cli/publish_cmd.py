"""``arena publish``: render snapshots as a static site (see :mod:`arena.publish`)."""

from __future__ import annotations

import click

from arena.cli.options import (
    DeclaredType,
    alias_target,
    declared,
    hidden_alias,
    max_boards_option,
    quiet_option,
)
from arena.core.options import option


def site_options(command):
    """``--heatmap-top`` and ``--attribution``: how the site looks (``publish``, ``nightly``)."""
    command = declared("attribution", metavar="TEXT")(command)
    top = DeclaredType(option("heatmap_top"))
    command = hidden_alias("--top", "--heatmap-top", "heatmap_top", type=top)(command)
    return declared("heatmap_top", callback=alias_target, metavar="N")(command)


@click.command("publish")
@click.argument("out_dir", type=click.Path(file_okay=True, dir_okay=True, path_type=str))
@declared(
    "snapshot",
    "--snapshot",
    "snapshot_id",
    help="Snapshot to render on the main page (default: latest overall).",
)
@declared("base_url", metavar="URL")
@site_options
@max_boards_option
@quiet_option
@click.pass_obj
def publish_command(
    app,
    out_dir: str,
    snapshot_id: int | None,
    heatmap_top: int,
    attribution: str | None,
    max_boards: int,
    base_url: str | None,
    quiet: bool,
) -> None:
    """Write the leaderboard as a static site into OUT_DIR.

    The main page shows the latest overall snapshot (or --snapshot ID); every
    other board (categories) gets its own page with the latest snapshot, and
    every shown model a page with its record and rating history. Downloads
    leaderboard.json and leaderboard.csv sit next to index.html in the schema
    of `arena leaderboard`. The site is built beside OUT_DIR and swapped in at
    the end, so a failed publish leaves the previous site untouched. Hidden
    models (`arena models annotate NAME --hide`) are left off the pages but
    their battles still count. Category pages are named by their labels
    (`arena categories`).

    \b
    Example:
        arena publish site/
        arena publish site/ --snapshot 12 --heatmap-top 15
        arena publish site/ --attribution "LMArena, CC-BY-4.0"
        arena publish site/ --base-url https://example.org/arena/
    """
    from arena.cli.progress import phase_reporter

    report = (
        app.arena()
        .publish(
            out_dir,
            snapshot=snapshot_id,
            heatmap_top=heatmap_top,
            attribution=attribution,
            max_boards=max_boards,
            progress=phase_reporter(quiet=quiet),
            base_url=base_url,
        )
        .report
    )
    if not quiet:
        others = len(report.boards) - 1
        click.echo(
            f"published snapshot {report.snapshot_id} ({report.board}, "
            f"{report.visible_models} models shown, {report.hidden_models} hidden), "
            f"{others} other board page{'s' if others != 1 else ''}, "
            f"{report.model_pages} model pages -> {report.out_dir}/index.html",
            err=True,
        )


COMMANDS = [publish_command]
