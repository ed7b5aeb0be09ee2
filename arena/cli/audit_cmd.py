"""``arena audit``: vote-quality probes over the votes behind a snapshot."""

from __future__ import annotations

import click

from arena.cli.options import (
    category_option,
    component_option,
    declared,
    format_option,
    level_option,
    quiet_option,
    rounds_option,
    seed_option,
    snapshot_option,
    source_option,
)
from arena.cli.output import emit, terminal_width
from arena.cli.progress import phase_reporter
from arena.core.vocabulary import PROBE_NAMES

JUDGE_COLUMNS = [
    "judge",
    "votes",
    "reasons",
    "effect",
    "bt_pvalue",
    "fisher_pvalue",
    "fastchat_log_score",
]
COLUMNS = ["probe", "estimate", "low", "high", "unit", "band", "flag", "verdict"]


def _num(x):
    return None if x is None else round(x, 3)


@click.command("audit")
@snapshot_option
@category_option("Audit the latest snapshot of this category's board.")
@source_option("Audit the latest snapshot of this source's board (`arena rebuild --source`).")
@component_option
@click.option(
    "--probe",
    "probes",
    multiple=True,
    type=click.Choice(PROBE_NAMES),
    help="Run only this probe (repeatable); a partial audit is not stored.",
)
@level_option
@declared("alpha")
@rounds_option
@seed_option
@click.option("--no-store", is_flag=True, help="Do not store the audit with the snapshot.")
@format_option
@quiet_option
@click.pass_obj
def audit_command(
    app,
    snapshot_id,
    category,
    source,
    component,
    probes,
    level,
    alpha,
    rounds,
    seed,
    no_store,
    fmt,
    quiet,
) -> None:
    """Audit the votes behind a snapshot: position bias, tie convention,
    intransitivity, vote clustering, judge influence, anomalous judges and
    coverage.

    Each probe gives an estimate with an interval and flags only when the
    whole interval lies outside its stated innocent band. Every judge is
    flagged, consistent with the board (the test could have seen a material
    departure and did not) or has too few votes to tell; the counts come
    first, with the votes the unchecked judges would need. Probes that need
    judge ids say so and are skipped on data without them. The JSON document
    is stored with the snapshot (the published site shows it; `arena rebuild
    --exclude-flagged` leaves the flagged judges out). With --component N:
    the votes among the models of comparable set N's board.

    \b
    Example:
        arena audit
        arena audit --probe anomaly --format json
        arena audit --category math --alpha 0.01
        arena audit --component 2
    """
    result = app.arena().audit(
        snapshot=snapshot_id,
        category=category,
        source=source,
        component=component,
        probes=probes,
        level=level,
        alpha=alpha,
        rounds=rounds,
        seed=seed,
        store=not no_store,
        progress=phase_reporter(quiet=quiet),
    )
    info, report = result.snapshot, result.report
    doc = {"snapshot": info.id, "board": info.board, **report.to_dict()}
    if fmt == "json":
        emit([], [], fmt, json_obj=result.to_dict())
        return
    rows = [
        {
            "probe": p["name"],
            "estimate": _num(p["estimate"]),
            **_interval(p),
            "unit": p["unit"],
            "band": "skipped" if p["skipped"] else _band(p["band"]),
            "flag": "FLAG" if p["flagged"] else "",
            "verdict": p["verdict"],
        }
        for p in doc["probes"]
    ]
    if fmt == "csv":
        emit(rows, COLUMNS, fmt, rounded=True)
        return
    click.echo(
        f"audit of snapshot {info.id} ({info.board}): {report.n_votes:,} votes, "
        f"{report.n_models:,} models, {report.n_judges:,} judge{'s' if report.n_judges != 1 else ''}"
    )
    anomaly = next((p for p in doc["probes"] if p["name"] == "anomaly" and not p["skipped"]), None)
    if anomaly is not None and anomaly["details"].get("summary"):
        width = terminal_width()
        click.echo(click.wrap_text(anomaly["details"]["summary"], width))
        if anomaly["details"].get("hint"):
            click.echo(click.wrap_text(anomaly["details"]["hint"], width))
        click.echo(click.wrap_text(f"(material: {anomaly['details']['material']['sentence']})", width))  # fmt: skip
    emit(rows, COLUMNS, "table", wrap=True)
    if report.flagged_judges:
        click.echo(f"flagged judges: {', '.join(report.flagged_judges)}")
        judges = next(p for p in doc["probes"] if p["name"] == "anomaly")["details"]["judges"]
        flagged = [
            {
                "judge": r["judge"],
                "votes": r["votes"],
                "reasons": ", ".join(r["reasons"]),
                "effect": r.get("effect") or "",
                "bt_pvalue": r["bt_pvalue"],
                "fisher_pvalue": r["fisher_pvalue"],
                "fastchat_log_score": r["fastchat_log_score"],
            }
            for r in judges
            if r["flagged"]
        ]
        emit(flagged, JUDGE_COLUMNS, "table")


def _interval(p: dict) -> dict:
    """``low``/``high``, left empty for a count or maximum that has no interval (low = high = estimate)."""
    if p["low"] is not None and p["low"] == p["high"] == p["estimate"]:
        return {"low": None, "high": None}
    return {"low": _num(p["low"]), "high": _num(p["high"])}


def _band(band) -> str:
    lo, hi = band
    lo = "-inf" if lo is None else f"{lo:.3g}"
    hi = "inf" if hi is None else f"{hi:.3g}"
    return f"[{lo}, {hi}]"


COMMANDS = [audit_command]
