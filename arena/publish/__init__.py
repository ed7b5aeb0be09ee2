"""Static leaderboard site: typed page context, inline SVG charts, Jinja templates.

``publish_site`` (in :mod:`arena.publish.site`) is the entry point used by
``arena publish`` and ``arena demo``.
"""

from arena.publish.atomic import PublishError
from arena.publish.site import PublishReport, publish_site

__all__ = ["PublishError", "PublishReport", "publish_site"]
