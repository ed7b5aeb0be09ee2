"""arena: Bradley-Terry leaderboards with honest intervals, from a battle store to a static page."""

__version__ = "0.1.0"
