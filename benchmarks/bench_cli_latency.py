"""How fast the command line answers: ``arena --help`` and ``arena leaderboard``.

Each command runs in a fresh process (start-up and imports included, as a user
waits for them), alternating between two checkouts so that both see the same
machine load; the table gives the median wall time and the median CPU time
(user + system) of each, and their ratio.

Usage::

    git worktree add /tmp/arena-before dd87783
    python benchmarks/bench_cli_latency.py --before /tmp/arena-before --runs 15

``--db`` names the database ``arena leaderboard`` reads (default: a demo
database made once with ``arena demo`` under the system's temporary folder).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {"--help": ["--help"], "leaderboard": ["leaderboard"]}


def run(root: Path, args: list[str], db: str, cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of ``arena ARGS`` from checkout ``root``."""
    code = f"import sys; sys.path.insert(0, {str(root)!r}); from arena.cli import main; main()"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code, *args, "--db", db],
        check=True,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        # byte code is written (the warm-up run compiles an edited checkout once):
        # with PYTHONDONTWRITEBYTECODE every run of a changed file would compile it
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def demo_db(root: Path) -> str:
    folder = Path(tempfile.gettempdir()) / "arena-bench-cli"
    folder.mkdir(exist_ok=True)
    db = folder / "arena.db"
    if not db.exists():
        code = f"import sys; sys.path.insert(0, {str(root)!r}); from arena.cli import main; main()"
        subprocess.run(
            [
                sys.executable,
                "-c",
                code,
                "demo",
                str(folder / "site"),
                "-q",
                "--db",
                f"sqlite:///{db}",
            ],
            check=True,
            cwd=folder,
        )
    return f"sqlite:///{db}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="a checkout to compare with (e.g. a worktree)")
    parser.add_argument("--after", type=Path, default=ROOT, help="default: this checkout")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--db", default=None)
    args = parser.parse_args()
    db = args.db or demo_db(args.after)
    roots = {"after": args.after} | ({"before": args.before} if args.before else {})
    cwd = Path(tempfile.mkdtemp())  # no arena.db or package in the working directory
    for root in roots.values():  # warm the file cache and byte-compile once
        for cmd in COMMANDS.values():
            run(root, cmd, db, cwd)
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for k in range(args.runs):
        for name, cmd in COMMANDS.items():
            # ABBA: each checkout goes first in every other round, so neither always
            # runs right after the other's heavier command
            order = list(roots.items())
            for label, root in order if k % 2 == 0 else order[::-1]:
                times.setdefault((label, name), []).append(run(root, cmd, db, cwd))
    print(f"load average {os.getloadavg()[0]:.2f}; {args.runs} runs each, medians; db {db}")
    print(f"{'command':14s} {'checkout':8s} {'wall s':>7s} {'cpu s':>7s}")
    for name in COMMANDS:
        for label in roots:
            got = times[(label, name)]
            wall = statistics.median(w for w, _ in got)
            cpu = statistics.median(c for _, c in got)
            print(f"arena {name:8s} {label:8s} {wall:7.3f} {cpu:7.3f}")
        if "before" in roots:
            ratio = statistics.median(w for w, _ in times[("after", name)]) / statistics.median(
                w for w, _ in times[("before", name)]
            )
            print(f"arena {name:8s} after/before wall: {ratio:.2f}")


if __name__ == "__main__":
    main()
