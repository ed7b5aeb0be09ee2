"""The one Jinja environment of the site: autoescaping, templates from ``templates/``.

Autoescape is on for every template (not only ``.html``): model names are
untrusted, and the only unescaped insertions are the SVG charts, which
:mod:`arena.publish.svg` builds from escaped text.
"""

from __future__ import annotations

from functools import lru_cache

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from arena.resources import templates_dir


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
    return env


def render(template: str, **context: object) -> str:
    return environment().get_template(template).render(**context)
