"""Battle store: SQLAlchemy models and session helpers."""
