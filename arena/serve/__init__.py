"""``arena serve``: the live arena backend -- pairs out, votes in, leaderboard JSON.

* :mod:`~arena.serve.keys` -- API keys (``arena keys``): created, listed, revoked, checked;
* :mod:`~arena.serve.tokens` -- signed, single-use, expiring battle tokens;
* :mod:`~arena.serve.pairs` -- the next pair to show, by the planner's rule;
* :mod:`~arena.serve.writer` -- votes and battles stored by group commit;
* :mod:`~arena.serve.limits` -- per-key rate limits;
* :mod:`~arena.serve.app` -- the ASGI application (needs ``pip install 'arena[serve]'``).

Only :mod:`~arena.serve.app` imports the web stack, so ``arena keys`` works
without the extra.  See ``docs/serve.md``.
"""
