"""Every option of the commands, declared once: its type, default, allowed values, bounds and help.

The front door (:mod:`arena.api`) checks its keyword arguments with
:func:`checked` before any work; the rebuild's options
(:class:`arena.jobs.rebuild.RebuildOptions`) check theirs the same way; the
command line generates its click options from these declarations
(:func:`arena.cli.options.declared`), so a flag's default, choices, bounds and
help are the library's. Defaults and allowed values are the names of
:mod:`arena.core.defaults`, which the engine reads too.

This module imports nothing heavier than the standard library: ``arena
--help`` reads it.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, cast

from arena.core import defaults as d
from arena.core.errors import OptionError, escape

if TYPE_CHECKING:
    from typing import SupportsIndex

__all__ = ["OPTIONS", "Option", "checked", "option"]


@dataclass(frozen=True)
class Option:
    """One option: what its value may be, its default and what it means.

    Attributes
    ----------
    name : str
        The keyword parameter (the flag is ``--`` + the name with dashes).
    kind : type
        ``int`` (a whole number: bool, float and text refused), ``float``
        (a finite number; an int is one), ``str``, ``bool``, ``tuple`` (an
        iterable of texts, not one text), or ``object`` (its reader parses it:
        ``anchor``, ``since``, ``until``).
    default : object
        The value when none is given (from :mod:`arena.core.defaults`).
    help : str
        What the option does, as ``--help`` says it.
    choices : tuple of str
        The allowed values of a text option (the engine's own tuple), if any.
    low, high : float, optional
        Bounds of a number; ``high`` of a whole number is at most
        :data:`~arena.core.defaults.INT64_MAX` (the database's and numpy's integers).
    open_bounds : bool
        ``low`` and ``high`` themselves are refused (a level in ``(0, 1)``).
    optional : bool
        ``None`` is a value: "not given", the reader's own rule applies.
    why : str
        Appended to the upper bound's message: why the bound is there.
    """

    name: str
    kind: type
    default: object
    help: str
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    open_bounds: bool = False
    optional: bool = False
    why: str = ""

    @property
    def upper(self) -> float | None:
        """The upper bound that applies: a whole number is never beyond 64 bits."""
        if self.kind is int:
            return d.INT64_MAX if self.high is None else min(self.high, d.INT64_MAX)
        return self.high

    def refuse(self, template: str, value: object) -> OptionError:
        return OptionError(self.name, template + escape(f", not {value!r}"))

    def check(self, value: object) -> object:
        """``value`` if it is one this option takes (whole numbers as ``int``).

        Raises
        ------
        OptionError
            Naming the option: a wrong type, NaN or infinity, out of bounds, not
            one of the choices.
        """
        if value is None:
            if self.optional:
                return None
            raise self.refuse(f"{{name}} must be {self._what()}", value)
        if self.kind is int:
            if isinstance(value, bool):
                raise self.refuse("{name} must be a whole number", value)
            try:
                # anything without __index__ raises the TypeError refused below
                value = operator.index(cast("SupportsIndex", value))
            except TypeError:
                raise self.refuse("{name} must be a whole number", value) from None
        elif self.kind is float:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise self.refuse("{name} must be a number", value)
            if not math.isfinite(value):
                raise self.refuse("{name} must be a finite number", value)
        elif self.kind is bool:
            if not isinstance(value, bool):
                raise self.refuse("{name} must be True or False", value)
        elif self.kind is str:
            if not isinstance(value, str):
                raise self.refuse(f"{{name}} must be {self._what()}", value)
            if self.choices and value not in self.choices:
                raise OptionError(
                    self.name,
                    "{name} must be one of " + escape(f"{', '.join(self.choices)} (got {value!r})"),
                )
        elif self.kind is tuple:
            if isinstance(value, str | bytes) or not isinstance(value, Iterable):
                raise self.refuse("{name} must be a list of names", value)
        if self.kind in (int, float):
            self._check_bounds(value)  # type: ignore[arg-type]
        return value

    def _check_bounds(self, value: float) -> None:
        low, high, why = self.low, self.upper, escape(self.why and f" ({self.why})")
        if self.open_bounds:
            if not (low is None or value > low) or not (high is None or value < high):
                raise OptionError(
                    self.name,
                    f"{{name}} must be greater than {_num(low)} and less than {_num(high)}"
                    + escape(f", not {value!r}"),
                )
            return
        if low is not None and value < low:
            raise OptionError(self.name, f"{{name}} must be at least {_num(low)}")
        if high is not None and value > high:
            raise OptionError(self.name, f"{{name}} must be at most {_num(high)}" + why)

    def parse(self, text: str) -> object:
        """The value of a command-line word (a number read as this option's kind)."""
        if self.kind not in (int, float):
            return text
        try:
            return int(text) if self.kind is int else float(text)
        except ValueError:
            raise self.refuse(f"{{name}} must be {self._what()}", text) from None

    def _what(self) -> str:
        if self.choices:
            return "one of " + escape(", ".join(self.choices))
        return {int: "a whole number", float: "a number", bool: "True or False"}.get(
            self.kind, "a text"
        )

    def bounds_text(self) -> str:
        """The bounds as ``--help`` shows them (``10<=x<=100000``), or ``""``."""
        low, high = self.low, self.high
        if self.kind not in (int, float) or (low is None and high is None):
            return ""
        less = "<" if self.open_bounds else "<="
        left = f"{_num(low)}{less}" if low is not None else ""
        right = f"{less}{_num(high)}" if high is not None else ""
        return f"{left}x{right}"


def _num(x: float | None) -> str:
    return f"{x:g}" if isinstance(x, float) and not x.is_integer() else f"{int(x or 0)}"


_KEEP_LAST = Option(
    "keep_last",
    int,
    None,
    "Keep the samples of each board's newest K snapshots (the latest always).",
    low=1,
    optional=True,
)
_KEEP_DAYS = Option(
    "keep_days",
    float,
    None,
    "Keep the samples of snapshots younger than N days (0 to 36525).",
    low=0,
    high=d.KEEP_DAYS_MAX,
    optional=True,
    why="a hundred years",
)
_HEATMAP_TOP = Option(
    "heatmap_top",
    int,
    d.DEFAULT_HEATMAP_TOP,
    "Models in the win-probability, win-rate and battle-count heatmaps: the top N "
    "by rating (the page says so); a board of thousands of models stays readable.",
    low=2,
)
_SNAPSHOT = Option("snapshot", int, None, "Snapshot id [default: latest].", low=1, optional=True)

#: Every declared option by name (one meaning per name across the commands).
OPTIONS: dict[str, Option] = {
    o.name: o
    for o in (
        # ---- rating: rebuild, nightly
        Option(
            "rounds",
            int,
            None,
            "Bootstrap rounds (resamples), or the fixed normal draws of analytic intervals "
            f"[default: {d.DEFAULT_ROUNDS}; a board's analytic intervals: chosen by the data, "
            f"{d.DEFAULT_ROUNDS} doubled up to {d.DRAWS_MAX:,}].",
            optional=True,
            low=d.ROUNDS_MIN,
            high=d.ROUNDS_MAX,
            why="rounds x models samples are held in memory",
        ),
        Option(
            "seed",
            int,
            d.DEFAULT_SEED,
            "Random seed (fixed by default: same data, same numbers).",
            low=0,
            why="stored as a 64-bit integer",
        ),
        Option(
            "level",
            float,
            d.DEFAULT_LEVEL,
            "Confidence level of intervals and tests.",
            low=0,
            high=1,
            open_bounds=True,
        ),
        Option("ci", str, d.DEFAULT_CI, "Interval method.", choices=d.CI_METHODS),
        Option(
            "simultaneous",
            bool,
            False,
            "Intervals that hold for all models together (max-|t|).",
        ),
        Option(
            "ties",
            str,
            d.DEFAULT_TIES,
            "Ties as half wins (LMArena) or the Davidson tie model.",
            choices=d.TIE_MODELS,
        ),
        Option(
            "both_bad",
            str,
            d.DEFAULT_BOTH_BAD,
            "Treat 'both bad' votes as ties or leave them out.",
            choices=d.BOTH_BAD_RULES,
        ),
        Option("position", bool, False, "Also estimate a first-position (model_a) advantage."),
        Option(
            "anchor",
            object,
            None,
            "Pin one model's rating, MODEL=RATING (default: mean 1000).",
            optional=True,
        ),
        Option(
            "prior",
            float,
            None,
            "Prior strength; 0 = pure MLE (error if it does not exist) [default: weak prior "
            "only when the MLE does not exist].",
            low=0,
            optional=True,
        ),
        Option(
            "min_battles",
            int,
            d.DEFAULT_MIN_BATTLES,
            "Models with fewer battles are listed but not ranked.",
            low=0,
        ),
        Option(
            "tiers",
            str,
            d.DEFAULT_TIERS,
            "Tier method: simultaneous = from the board's one inference (the test behind "
            "its rank sets and verdicts: a tier's top model is shown better than every model "
            "in lower tiers); or, for comparison, paired bootstrap tiers with max-t/Holm/BH "
            "correction, or leader-anchored interval overlap.",
            choices=d.TIER_METHODS,
        ),
        Option(
            "tier_rule",
            str,
            d.DEFAULT_TIER_RULE,
            "Tiers maxt/holm/bh: split from the tier leader, or only where every pair "
            "across the cut differs (stricter). Not used by --tiers simultaneous.",
            choices=d.TIER_RULES,
        ),
        Option(
            "cluster",
            str,
            d.DEFAULT_CLUSTER,
            "Resampling unit of the bootstrap.",
            choices=d.CLUSTERS,
        ),
        Option(
            "style_control",
            bool,
            True,
            "Also write a style-controlled board for every board whose battles carry style "
            "metadata (battles without it are left out of that board and counted) [default: on].",
        ),
        Option(
            "style_features",
            tuple,
            (),
            "Add a user covariate ingested per side (NAME_a/NAME_b) to the style model; "
            "repeatable.",
        ),
        Option(
            "style_reg",
            float,
            None,
            "LMArena's L2 penalty on the style fit (their published numbers use 0.5) "
            "[default: none, the exact MLE].",
            low=0,
            optional=True,
            why="LMArena uses 0.5",
        ),
        Option(
            "components",
            str,
            d.DEFAULT_COMPONENTS,
            "When some models never met the others (directly or through others): rank the "
            "largest comparable set and list the rest unranked, or also write one board per "
            "other set (key BOARD|component:N, N = 2, 3, ...; see `arena leaderboard --component`).",
            choices=d.COMPONENT_MODES,
        ),
        Option(
            "max_models",
            int,
            d.DEFAULT_MAX_MODELS,
            "Refuse a board with more models than this (a guard against an accidental huge "
            "board, such as a model column holding prompt ids). Boards of 1500 models or more "
            "are rated on the sparse path (10,000 models, 1000 rounds: ~30 s, ~1 GB).",
            low=2,
        ),
        Option(
            "max_boards",
            int,
            d.DEFAULT_MAX_BOARDS,
            "Refuse to build or publish more boards (overall + one per category) than this "
            "(a guard against a category column holding something else, such as prompt ids).",
            low=1,
        ),
        # ---- rebuild: which battles, what to read
        Option("category", str, None, "Rate only battles of this category.", optional=True),
        Option("source", str, None, "Rate only battles of this source.", optional=True),
        Option(
            "since", object, None, "Only battles at or after this ISO date/time.", optional=True
        ),
        Option("until", object, None, "Only battles before this ISO date/time.", optional=True),
        Option(
            "all_categories",
            bool,
            False,
            "Also build one snapshot per category, in the same run.",
        ),
        Option(
            "all_sources",
            bool,
            False,
            "Also build one board per source (`arena ingest --source`), so votes and judge "
            "verdicts are rated apart; with --all-categories each source gets its categories too.",
        ),
        Option(
            "exclude_flagged",
            bool,
            False,
            "Leave out the judges flagged by the stored audit of the board's latest snapshot "
            "(`arena audit`); recorded in the snapshot.",
        ),
        Option(
            "read",
            str,
            d.DEFAULT_READ,
            "Read the count table (kept by every ingest; fast at any number of battles) or "
            "aggregate the battles; auto reads the counts unless --since/--until, --source, "
            "--cluster or --exclude-flagged need the battles. Both give the same snapshot.",
            choices=d.READS,
        ),
        Option(
            "ranks",
            str,
            d.DEFAULT_RANKS,
            "Rank column of the table: the board's simultaneous rank sets, or LMArena's "
            "interval-overlap rank (UB)..rank (LB). JSON and CSV carry both.",
            choices=d.RANK_COLUMNS,
        ),
        # ---- publish, nightly: the site and retention
        _SNAPSHOT,
        _HEATMAP_TOP,
        Option(
            "attribution",
            str,
            None,
            "Data-source attribution shown in every page footer.",
            optional=True,
        ),
        Option(
            "base_url",
            str,
            None,
            "The address the site is served at (https://...): link previews get absolute "
            "og:image and og:url; without it no absolute address is written.",
            optional=True,
        ),
        _KEEP_LAST,
        _KEEP_DAYS,
        replace(_KEEP_LAST, name="prune_keep_last"),
        replace(_KEEP_DAYS, name="prune_keep_days"),
        Option(
            "boards",
            str,
            d.DEFAULT_NIGHTLY_BOARDS,
            "What the night rebuilds: kept = the boards the database has, each with the "
            "options its latest snapshot was built with (sources apart, style variants, "
            "categories, excluded judges; the rating options given are not used); given = "
            "the overall board and every category with the rating options given (every "
            "source pooled on one board).",
            choices=d.NIGHTLY_BOARDS,
        ),
        Option(
            "follow_symlinks",
            bool,
            False,
            "Read files that symbolic links in --incoming point to (refused by default: "
            "whoever can write the drop folder could make arena read any file).",
        ),
        # ---- boards, ingest, audit, plan
        Option(
            "component",
            int,
            None,
            "The board of comparable set N from the same rebuild (`arena rebuild --components "
            "separate`; 1 is the main board, 2, 3, ... the sets that never met it).",
            low=1,
            optional=True,
        ),
        Option(
            "input_format",
            str,
            d.DEFAULT_INPUT_FORMAT,
            "Input format (guessed from name or content).",
            choices=d.INPUT_FORMATS,
        ),
        Option(
            "max_expand",
            int,
            d.DEFAULT_MAX_EXPAND,
            "Most battles one aggregated-count row (home.wins, away.wins) may stand for.",
            low=1,
        ),
        Option(
            "alpha",
            float,
            d.DEFAULT_AUDIT_ALPHA,
            "Family-wise level of the anomalous-judge flags.",
            low=0,
            high=1,
            open_bounds=True,
        ),
        Option(
            "power",
            float,
            d.DEFAULT_POWER,
            "Target power.",
            low=0,
            high=1,
            open_bounds=True,
        ),
        Option(
            "rule",
            str,
            d.DEFAULT_PLAN_RULE,
            "paper: shrink every interval fastest (Chiang et al. eq. 9); tiers: settle "
            "undecided separations.",
            choices=d.PLAN_RULES,
        ),
        Option("top", int, None, "List only the N most probable pairs.", low=1, optional=True),
        Option("n", int, None, "Draw N battles instead.", low=1, optional=True),
        Option(
            "provisional",
            bool,
            False,
            "The provisional board `arena serve` keeps current: the latest snapshot "
            "refitted on the votes stored since, with analytic intervals (the full "
            "snapshot when no vote came since).",
        ),
        # ---- every command: the database
        Option(
            "wait",
            float,
            d.DEFAULT_WAIT,
            "How long to wait for another command's lock on the database, then give up "
            "(env ARENA_WAIT); before or after the command.",
            low=0,
        ),
        # ---- serve
        Option("host", str, d.DEFAULT_HOST, "Address to listen on."),
        Option("port", int, d.DEFAULT_PORT, "Port to listen on.", low=0, high=65_535),
        Option(
            "workers",
            int,
            d.DEFAULT_WORKERS,
            "Worker processes (PostgreSQL only: SQLite is served by one process).",
            low=1,
            high=64,
        ),
        Option(
            "default_rate",
            float,
            d.DEFAULT_RATE,
            "Requests per second per key and worker for keys without their own --rate "
            "(0: no limit).",
            low=0,
        ),
        Option(
            "battle_ttl",
            float,
            d.DEFAULT_BATTLE_TTL,
            "Seconds a pair's battle token stays valid.",
            low=1,
        ),
        Option(
            "max_body",
            int,
            d.DEFAULT_MAX_BODY,
            "Largest request body in bytes (413 beyond).",
            low=1024,
        ),
        Option(
            "max_battles",
            int,
            d.DEFAULT_MAX_BATTLES,
            "Most battles one POST /v1/battles may store, aggregated rows expanded (413 beyond).",
            low=1,
        ),
        Option(
            "max_header_bytes",
            int,
            d.DEFAULT_MAX_HEADER_BYTES,
            "Largest request line plus headers in bytes (431 and the connection closed beyond).",
            low=1024,
        ),
        Option(
            "refit_every",
            float,
            d.DEFAULT_REFIT_EVERY,
            "Seconds between two looks for new votes; then one process per arena refits "
            "the provisional board (0: no provisional board).",
            low=0,
        ),
        Option(
            "provisional_method",
            str,
            d.DEFAULT_PROVISIONAL_METHOD,
            "Analytic intervals of the provisional board.",
            choices=d.PROVISIONAL_METHODS,
        ),
        Option(
            "max_subscribers",
            int,
            d.DEFAULT_MAX_SUBSCRIBERS,
            "Most open /v1/leaderboard/events streams per worker (503 beyond).",
            low=1,
        ),
        Option(
            "anonymous_rate",
            float,
            d.DEFAULT_ANONYMOUS_RATE,
            "Requests per second per client address and worker without a valid key, "
            "checked before any database work (0: no limit).",
            low=0,
        ),
    )
}

#: The rating options of ``rebuild`` and ``nightly`` (everything but the battles read).
RATING = (
    "rounds",
    "seed",
    "level",
    "ci",
    "simultaneous",
    "ties",
    "both_bad",
    "position",
    "anchor",
    "prior",
    "min_battles",
    "tiers",
    "tier_rule",
    "cluster",
    "style_control",
    "style_features",
    "style_reg",
    "components",
)


def option(name: str) -> Option:
    """The declaration of option ``name`` (a ``KeyError`` for an undeclared one)."""
    return OPTIONS[name]


def checked(values: Mapping[str, object]) -> dict[str, object]:
    """``values`` with every declared option checked; other keys pass as they are.

    Raises
    ------
    OptionError
        The first bad value, naming its parameter.
    """
    return {k: OPTIONS[k].check(v) if k in OPTIONS else v for k, v in values.items()}
