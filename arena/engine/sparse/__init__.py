"""The sparse path for boards of thousands of models: no models x models array anywhere.

Newton solver (:mod:`.newton`), point fit (:mod:`.fit`), bootstrap (:mod:`.bootstrap`),
score statistics (:mod:`.score`) and tiers (:mod:`.tiers`).
"""
