"""Beyond-accuracy measures of recommendation lists.

* :mod:`~sparkeval.diversity.inter_user` — Hamming diversity (exact, O(N)), mean Jaccard.
* :mod:`~sparkeval.diversity.intra_list` — item similarity, intra-list diversity, serendipity.
* :mod:`~sparkeval.diversity.coverage` — catalog/distributional coverage, Gini, novelty.
* :mod:`~sparkeval.diversity.evaluate` — all of them for one run.
"""
