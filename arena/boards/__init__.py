"""Boards: snapshot writing and reading, diffs, head-to-head, comparable-set boards.

* :mod:`~arena.boards.write` -- the only code that inserts snapshot rows;
* :mod:`~arena.boards.snapshots` -- typed reads of snapshots (the leaderboard documents);
* :mod:`~arena.boards.compare` -- which board, what moved between two snapshots, A against B;
* :mod:`~arena.boards.split` / :mod:`~arena.boards.components` -- boards of comparable sets.
"""
