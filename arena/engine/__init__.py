"""Rating engine: pure numpy/scipy functions over integer model indices.

Nothing in this package may import sqlalchemy, click or jinja2.
"""
