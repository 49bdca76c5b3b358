"""Locality-sensitive hashing for set and text similarity at Spark scale.

* :mod:`~sparkeval.lsh.minhash` — vectorised MinHash, bit-identical to datasketch.
* :mod:`~sparkeval.lsh.banding` — bands x rows for a threshold and recall target.
* :mod:`~sparkeval.lsh.candidates` — bucket equi-match into candidate pairs.
* :mod:`~sparkeval.lsh.similar` — all pairs with exact Jaccard >= T.
* :mod:`~sparkeval.lsh.simhash` — 64-bit SimHash and exact Hamming search.
* :mod:`~sparkeval.lsh.shingles` — word/char shingles in Spark SQL.
* :mod:`~sparkeval.lsh.clusters` — connected components of verified pairs.
"""
