"""Shared leaves every layer may import: defaults, outcome codes, words, formats, bundled files.

Nothing here imports another part of arena, a database driver, click or jinja2.
"""
