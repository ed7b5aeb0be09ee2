"""The comparison graph: which models share one rating scale (comparable sets), and a set's fit put back on the whole board."""
