"""What to collect next: pair weights and power (:mod:`~arena.plan.weights`), the same
a block of pairs at a time for large boards (:mod:`~arena.plan.pairs`), and the snapshot
reads they need (:mod:`~arena.plan.store`)."""
