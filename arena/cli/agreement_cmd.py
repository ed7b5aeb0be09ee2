"""``arena agreement``: does a candidate board (an LLM judge, say) agree with a reference board?"""

from __future__ import annotations

import click

from arena.cli.options import format_option, level_option


def _num(x, digits=3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _left_out_lines(left_out: list[dict]) -> list[str]:
    """The models not compared, by why: every name, so a spelling mismatch can be seen."""
    if not left_out:
        return ["no model left out: every model of both boards is compared"]
    groups: dict[str, list[str]] = {}
    for d in left_out:
        why = d["reason"].split(":")[0]  # unranked: one group, the reasons in JSON
        groups.setdefault(why, []).append(d["model"])
    lines = [f"{len(left_out)} models left out (reasons per model: --format json):"]
    lines += [f"  {why} ({len(names)}): {', '.join(names)}" for why, names in groups.items()]
    if any(w.startswith("only on") for w in groups):
        lines.append(
            "  (a model spelled differently on the two boards is two models unless an "
            "alias links them: `arena models alias NAME CANONICAL`)"
        )
    return lines


def _aliased_lines(aliased: list[dict]) -> list[str]:
    """The shared models matched through an alias, reference name first."""
    if not aliased:
        return []
    pairs = ", ".join(f"{d['reference']} = {d['candidate']}" for d in aliased)
    return [f"{len(aliased)} of them matched by alias (reference = candidate): {pairs}"]


def _text(ag) -> list[str]:
    ref, cand = ag.reference, ag.candidate
    pct = round(100 * ag.level)
    lines = [
        f"reference: snapshot {ref['snapshot']} (board {ref['board']})",
        f"candidate: snapshot {cand['snapshot']} (board {cand['board']})",
        f"{len(ag.models)} shared ranked models: {', '.join(ag.models)}",
        *_aliased_lines(ag.aliased),
        *_left_out_lines(ag.left_out),
        "",
        f"Spearman {_num(ag.spearman.estimate)} ({pct}% basic bootstrap {_num(ag.spearman.ci_low)} to {_num(ag.spearman.ci_high)})",  # fmt: skip
        f"Kendall  {_num(ag.kendall.estimate)} ({pct}% basic bootstrap {_num(ag.kendall.ci_low)} to {_num(ag.kendall.ci_high)})",  # fmt: skip
    ]
    for side in ("reference", "candidate"):
        s = ag.separability[side]
        lines.append(
            f"separability, {side}: {_num(s['overlap'])} of {s['pairs']} pairs by intervals, "
            f"{_num(s['simultaneous'])} under the board's simultaneous inference ({s['inference']})"
        )
    c = ag.agreement_counts
    lines += [
        f"agreement with confidence: {_num(ag.agreement_with_confidence)} over {c['pairs']} pairs "
        f"the reference separates ({c['agree']} agree, {c['disagree']} disagree, "
        f"{c['not_separated']} not separated by the candidate)",
        f"pair-rank Brier score: {_num(ag.brier)} over {ag.brier_pairs} pairs",
    ]
    s = ag.agreement_simultaneous
    lines.append(
        f"under both boards' simultaneous inference: {s['agree']} agree, {s['disagree']} "
        f"disagree, {s['not_separated']} not separated of {s['pairs']} pairs the reference separates"
    )
    if ag.votes is not None:
        v = ag.votes
        lines.append(
            f"per-vote agreement on {v.keys} shared battles ({v.vote_pairs} vote pairs): "
            f"{_num(v.with_ties)} with ties, {_num(v.without_ties)} without "
            f"({v.pairs_without_ties} pairs), Cohen's kappa {_num(v.kappa)}"
        )
    else:
        lines.append(f"per-vote agreement: none ({ag.votes_reason})")
    return lines


_PAIR_COLUMNS = ["model_a", "model_b", "reference", "candidate", "outcome", "p_reference", "p_candidate"]  # fmt: skip


@click.command("agreement")
@click.option("--reference", "reference", required=True, metavar="SELECTOR", help="The reference board (e.g. source=lmarena-140k).")  # fmt: skip
@click.option("--candidate", "candidate", required=True, metavar="SELECTOR", help="The board compared with it (e.g. source=ko-arena-hard).")  # fmt: skip
@level_option
@format_option
@click.pass_obj
def agreement_command(app, reference, candidate, level, fmt):
    """Compare a candidate board with a reference board on the models both rank.

    SELECTOR names a board as `arena leaderboard` does: comma-separated
    source=NAME, category=NAME, style, component=N, snapshot=ID (or a bare
    snapshot id; `overall` for the overall board); the latest snapshot of
    that board is used. Models ranked on both boards are compared; the others
    are listed with the reason they were left out.

    What is computed (Li et al. 2024, "From Crowdsourced Data to High-Quality
    Benchmarks: Arena-Hard and BenchBuilder Pipeline", sec. 3):

    \b
    - Spearman and Kendall tau-b of the two boards' ratings; intervals
      (--level) from bootstrap rounds, round r of one snapshot's stored
      samples paired with round r of the other's: the basic bootstrap
      interval 2 r - q of the per-round correlations' quantiles q, clipped to
      [-1, 1] (a replicate adds noise and attenuates the correlation; plain
      percentiles would sit too low).
    - separability with confidence of each board: the share of shared model
      pairs whose stored intervals do not overlap; beside it, the share the
      board separates under its own simultaneous inference (all its ranked
      models, its level).
    - agreement with confidence: over the pairs the reference's intervals
      separate, +1 when the candidate's intervals separate them the same way,
      -1 the other way, 0 when they overlap; the mean, in [-1, 1] (the
      paper's script prints (mean + 1) / 2).
    - pair-rank Brier score: over the same pairs, mean (1 - p)^2 with p the
      share of the candidate's bootstrap rounds in which the reference's
      winner is ahead (ties count half).
    - per pair (model_a ahead on the reference): each board's verdict under
      its simultaneous inference (a better, b better, not separated) and
      agree / disagree / not separated.
    - when the two boards come from different sources that judged the same
      battles (same question and model pair; battle ids are unique across
      the store): the per-vote agreement with and without ties and Cohen's
      kappa, every pair of votes on the same battle counted once (the
      MT-Bench paper's judge-vs-human agreement).

    --format table/csv lists the pairs (the summary first in table form);
    --format json: {"models", "left_out", "spearman": {"estimate", "ci_low",
    "ci_high"}, "kendall", "separability": {"reference", "candidate"},
    "agreement_with_confidence", "brier", "pairs": [...], "votes", ...}.

    \b
    Example:
        arena rebuild --source lmarena-140k && arena rebuild --source ko-arena-hard
        arena agreement --reference source=lmarena-140k --candidate source=ko-arena-hard
    """
    from arena.cli.output import emit

    ag = app.arena().agreement(reference, candidate, level=level)
    if fmt == "json":
        emit([], [], fmt, json_obj=ag.to_dict())
        return
    rows = [{c: getattr(p, c) for c in _PAIR_COLUMNS} for p in ag.pairs]
    if fmt == "table":
        for line in _text(ag):
            click.echo(line)
        click.echo()
    emit(rows, _PAIR_COLUMNS, fmt)


COMMANDS = [agreement_command]
