"""``arena serve`` (the live arena backend) and ``arena keys`` (its API keys)."""

from __future__ import annotations

import click

from arena.cli.options import declared, seed_option
from arena.cli.output import emit, format_option

KEY_COLUMNS = ["name", "scope", "rate", "created_at", "revoked_at"]


@click.command("serve")
@declared("host")
@declared("port")
@declared("workers")
@declared("default_rate")
@declared("battle_ttl")
@declared("max_body")
@declared("max_battles")
@declared("max_header_bytes")
@declared("anonymous_rate")
@declared("refit_every")
@declared("provisional_method")
@declared("max_subscribers")
@seed_option
@click.pass_obj
def serve_command(
    app,
    host,
    port,
    workers,
    default_rate,
    battle_ttl,
    max_body,
    max_battles,
    max_header_bytes,
    anonymous_rate,
    refit_every,
    provisional_method,
    max_subscribers,
    seed,
):
    """Serve the arena over HTTP: pairs out, votes in, leaderboard JSON.

    Needs `pip install 'arena[serve]'`. Every route but /healthz and /metrics
    takes `Authorization: Bearer TOKEN` from `arena keys create`. OpenAPI docs
    at /docs; deployment, workers and the pair rule: docs/serve.md.

    --seed seeds the pair draws: one worker replays the same draws for the
    same seed and snapshots; with --workers N each worker mixes in its process
    id, so workers never hand out the same sequence. --wait bounds how long a
    request waits for the database's write lock (then 503 with Retry-After).
    With --workers N, the workers stop when this process dies, even by kill -9.

    Every --refit-every seconds one process per arena (whichever worker holds
    the arena's lock; another takes over if it dies) looks for votes stored
    since the provisional board and refits it: GET
    /v1/leaderboard?provisional=true serves it, GET /v1/leaderboard/events
    announces each one (server-sent events). The full rebuild stays the reference.

    \b
    Example:
        arena keys create web --scope vote
        arena serve --port 8000
        curl -H "Authorization: Bearer $TOKEN" localhost:8000/v1/pair
        curl -H "Authorization: Bearer $READ" "localhost:8000/v1/leaderboard?provisional=true"
    """
    try:
        import uvicorn

        from arena.serve.app import PARENT_ENV
        from arena.serve.config import CONFIG_ENV, ServeConfig
    except ImportError as exc:
        raise click.ClickException(
            f"arena serve needs its web stack ({exc.name} is missing): pip install 'arena[serve]'"
        ) from None
    import os

    engine = app.engine()  # refuses a missing, empty or outdated database with one line
    if engine.dialect.name == "sqlite" and workers > 1:
        raise click.ClickException(
            "--workers > 1 needs PostgreSQL: a SQLite database is served by one process"
        )
    url = engine.url.render_as_string(hide_password=False)
    engine.dispose()
    config = ServeConfig(
        url=url,
        rate=default_rate,
        battle_ttl=battle_ttl,
        max_body=max_body,
        max_battles=max_battles,
        max_header_bytes=max_header_bytes,
        anonymous_rate=anonymous_rate,
        wait=app.wait,
        seed=seed,
        per_worker_seed=workers > 1,
        refit_every=refit_every,
        provisional_method=provisional_method,
        max_subscribers=max_subscribers,
    )
    os.environ[CONFIG_ENV] = config.to_env()
    if workers > 1:  # the workers end with this process, the supervisor
        os.environ[PARENT_ENV] = str(os.getpid())
    try:
        from arena.serve.protocol import PROTOCOL as http
    except ImportError:  # no httptools: h11, limited by h11_max_incomplete_event_size
        http = "h11"
    if not app.quiet:
        click.echo(f"arena serve: http://{host}:{port} (docs at /docs)", err=True)
    uvicorn.run(
        "arena.serve.app:create_app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="warning" if app.quiet else "info",
        timeout_graceful_shutdown=30,
        http=http,
        h11_max_incomplete_event_size=max_header_bytes,
    )


@click.group("keys")
def keys_group() -> None:
    """API keys of `arena serve`: create (the token is shown once), list, revoke.

    \b
    Example:
        arena keys create web --scope vote
        arena keys list
        arena keys revoke web
    """


@keys_group.command("create")
@click.argument("name")
@click.option(
    "--scope",
    type=click.Choice(["vote", "ingest", "read", "admin"]),
    required=True,
    help="vote: pairs and votes; ingest: battle batches; read: leaderboards; admin: all.",
)
@click.option(
    "--rate",
    type=click.FloatRange(0),
    default=None,
    help="This key's requests per second (default: arena serve --default-rate; 0: no limit).",
)
@click.pass_obj
def keys_create(app, name, scope, rate):
    """Create key NAME and print its token (once: only a hash is stored).

    \b
    Example:
        arena keys create web --scope vote
        arena keys create loader --scope ingest --rate 0
    """
    from arena.serve.keys import KeyRefused, create_key

    try:
        new = create_key(app.engine(create=True), name, scope=scope, rate=rate)
    except KeyRefused as exc:
        raise click.ClickException(str(exc)) from None
    if not app.quiet:
        click.echo(f"key {new.info.name!r} ({new.info.scope}); its token, shown once:", err=True)
    click.echo(new.token)


@keys_group.command("list")
@format_option
@click.pass_obj
def keys_list(app, fmt):
    """List keys (names, scopes, rates, when created and revoked; never tokens).

    \b
    Example:
        arena keys list --format json
    """
    from arena.serve.keys import list_keys

    with app.engine().connect() as conn:
        rows = [k.to_dict() for k in list_keys(conn)]
    emit(rows, KEY_COLUMNS, fmt)


@keys_group.command("revoke")
@click.argument("name")
@click.pass_obj
def keys_revoke(app, name):
    """Revoke key NAME: its token stops working (within 2 seconds on running servers).

    \b
    Example:
        arena keys revoke web
    """
    from arena.serve.keys import KeyRefused, revoke_key

    try:
        info = revoke_key(app.engine(), name)
    except KeyRefused as exc:
        raise click.ClickException(str(exc)) from None
    assert info.revoked_at is not None  # revoke_key returns the revoked row
    click.echo(f"key {info.name!r} revoked at {info.revoked_at.isoformat()}")


COMMANDS = [serve_command, keys_group]
