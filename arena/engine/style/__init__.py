"""Style control: covariates (:mod:`.design`), likelihood (:mod:`.model`), point fit
(:mod:`.fit`), bootstrap (:mod:`.boot`) and :func:`~arena.engine.style.rate.rate_style` (:mod:`.rate`)."""
