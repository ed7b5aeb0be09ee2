"""The page-context API in one import: formats, words, views and the page builders.

Templates only lay out what these build: every number is already a string with
a fixed format (so output is deterministic and identical wherever it appears),
every chart is already SVG markup, every link is already relative to the page.
Nothing here writes files; :mod:`arena.publish.site` does that. The pieces live
in modules of one job each:

* :mod:`arena.publish.fmt`: names, file slugs, number and interval formats;
* :mod:`arena.publish.words`: board labels, flag words, the method text;
* :mod:`arena.publish.views`: the dataclasses the templates read;
* :mod:`arena.publish.board_page`, :mod:`arena.publish.model_page`: the builders.
"""

from __future__ import annotations

from arena.publish.board_page import board_switch, leaderboard_page
from arena.publish.fmt import (
    display,
    fmt_count,
    fmt_date,
    fmt_interval,
    fmt_rating,
    model_href,
    rank_text,
    safe_link,
    slug,
)
from arena.publish.model_page import model_page
from arena.publish.views import (
    BoardSummary,
    Chart,
    LeaderboardPage,
    Link,
    ModelPage,
    RowView,
    SiteBoard,
    TierGroup,
)
from arena.publish.words import attribution_for, board_label, describe_method

__all__ = [
    "BoardSummary",
    "Chart",
    "LeaderboardPage",
    "Link",
    "ModelPage",
    "RowView",
    "SiteBoard",
    "TierGroup",
    "attribution_for",
    "board_label",
    "board_switch",
    "describe_method",
    "display",
    "fmt_count",
    "fmt_date",
    "fmt_interval",
    "fmt_rating",
    "leaderboard_page",
    "model_href",
    "model_page",
    "rank_text",
    "safe_link",
    "slug",
]
