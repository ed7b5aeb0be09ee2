"""The read side of the battle store: counts and battles for the rebuild, model and category metadata.

* :mod:`~arena.store.read` -- count boards and battle aggregates for the rebuild, model tallies;
* :mod:`~arena.store.style` -- a board's battles with their style features, as numpy arrays;
* :mod:`~arena.store.annotate` -- per-model display fields (organisation, licence, link);
* :mod:`~arena.store.categories` -- category keys, their labels and battle counts.
"""
