"""Interrupting an ingest at a chosen write, to check it is transactional."""

from __future__ import annotations


def interrupt_on_insert(monkeypatch, *, at: int) -> dict:
    """Raise KeyboardInterrupt in the writer's ``at``-th insert (the step shared by the
    column-wise and row-wise paths); returns the call counter."""
    import arena.ingest.writer as writer

    calls = {"n": 0}
    real = writer.BattleWriter._insert

    def flaky(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == at:
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(writer.BattleWriter, "_insert", flaky)
    return calls
