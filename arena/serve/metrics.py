"""The Prometheus metrics of one worker: requests, latency, stores, refusals, queue."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["Metrics"]


class Metrics:
    """One worker's counters, on a registry of its own (tests start several apps)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "arena_requests",
            "HTTP requests by route, method and status",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "arena_request_seconds",
            "Request latency by route",
            ["route"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
            registry=self.registry,
        )
        self.votes = Counter("arena_votes_stored", "Votes committed", registry=self.registry)
        self.battles = Counter(
            "arena_battles_stored", "Battles committed (votes included)", registry=self.registry
        )
        self.rejects = Counter(
            "arena_rejects", "Requests refused, by reason", ["reason"], registry=self.registry
        )
        self.queue = Gauge(
            "arena_write_queue", "Writes waiting for a commit", registry=self.registry
        )

        self.refits = Histogram(
            "arena_provisional_refit_seconds",
            "Refits of the provisional board by this worker (read, fit, write)",
            buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=self.registry,
        )
        self.refitter = Gauge(
            "arena_provisional_refitter",
            "1 while this worker holds the arena's refit lock",
            registry=self.registry,
        )
        self.subscribers = Gauge(
            "arena_event_subscribers",
            "Open /v1/leaderboard/events streams of this worker",
            registry=self.registry,
        )

    def committed(self, votes: int, battles: int) -> None:
        """The writer's callback after each commit."""
        self.votes.inc(votes)
        self.battles.inc(battles)
