"""The one Jinja environment of the site: autoescaping, templates from ``templates/``.

Autoescape is on for every template (not only ``.html``): model names are
untrusted, and the only unescaped insertions are the SVG charts, which
:mod:`arena.publish.svg` builds from escaped text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

from arena.core.resources import templates_dir
from arena.publish.fmt import fmt_count

if TYPE_CHECKING:
    from arena.publish.views import OpponentView


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(
        autoescape=True,
        loader=FileSystemLoader(str(templates_dir())),
        # A typo in a template must fail the publish, not print an empty cell.
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["opponent_rows"] = opponent_rows
    env.filters["count"] = fmt_count
    env.filters["name_parts"] = name_parts
    return env


#: A date at the end of a name's hyphen-separated part ("02-24", "2025-04-14"):
#: one token, so a narrow column breaks the name after its other hyphens.
_DATE = re.compile(r"(?:(?<=-)|^)(\d{2,4}(?:-\d{2}){1,2})(?=-|$)")


@lru_cache(maxsize=8192)
def name_parts(label: str) -> Markup:
    """A model's name, escaped, its dates kept whole (``<span class="nb">``)."""
    return Markup(_DATE.sub(r'<span class="nb">\1</span>', str(escape(label))))


def opponent_rows(opponents: Iterable[OpponentView]) -> Markup:
    """The body rows of a model's record table.

    A 300-model board gives ~30k opponent rows over all model pages; built here
    with one escape per text field this is ~10x faster than a Jinja loop doing
    eight attribute lookups and escapes per row, which kept publishing over 2 s.
    Only the label and href are text and escaped; the rest are numbers that
    :mod:`arena.publish.fmt` formatted itself (digits, ".", "%", "-").
    """
    out = []
    for o in opponents:
        # one line, cut by CSS with an ellipsis; the full name in the tooltip
        label = escape(o.label)
        parts = name_parts(o.label)
        if o.href:
            name = f'<a class="name" href="{escape(o.href)}" title="{label}"><bdi>{parts}</bdi></a>'
        else:
            name = f'<span class="name" title="{label}"><bdi>{parts}</bdi></span>'
        out.append(
            f'<tr><th scope="row">{name}</th><td class="num">{o.battles}</td>'
            f'<td class="num opt">{o.wins}</td><td class="num opt">{o.losses}</td>'
            f'<td class="num opt">{o.ties}</td><td class="num">{o.observed}</td>'
            f'<td class="num">{o.expected}</td></tr>\n'
        )
    return Markup("".join(out))


def render(template: str, **context: object) -> str:
    return environment().get_template(template).render(**context)
