"""What the fits allow one to say: intervals, ranks, paired tests over all pairs, rank sets and tiers, one pair's verdict."""
