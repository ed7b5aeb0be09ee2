"""The package version, in the room every other imports (snapshots and audits record it)."""

__version__ = "0.1.0"

__all__ = ["__version__"]
