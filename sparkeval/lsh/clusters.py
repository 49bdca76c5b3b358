"""Near-duplicate clusters: connected components of the verified pair graph.

The components are computed on the driver with a vectorised union-find (min-label
propagation plus pointer jumping in numpy) over the *verified* pairs only. Those
pairs are the command's own output, already written, and are far fewer than the
documents in any realistic corpus; a Spark label-propagation loop would need one
or more shuffles per round (rounds grow with the graph's diameter) for a graph
that fits in a few megabytes. The driver never sees the documents.

A cluster's id is its smallest member id; documents without any pair are not
listed (they are singleton clusters).

Example:
    >>> labels = components(np.array([1, 2, 7]), np.array([2, 3, 8]))
    >>> sorted(labels.items())
    [(1, 1), (2, 1), (3, 1), (7, 7), (8, 7)]
"""

from __future__ import annotations

import numpy as np


def component_labels(left: np.ndarray, right: np.ndarray, n: int) -> np.ndarray:
    """Smallest node index of each node's component, for edges over nodes 0..n-1."""
    labels = np.arange(n, dtype=np.int64)
    if len(left) == 0:
        return labels
    while True:
        low = np.minimum(labels[left], labels[right])
        before = labels.copy()
        np.minimum.at(labels, left, low)
        np.minimum.at(labels, right, low)
        # pointer jumping: follow labels until every node points at a root
        while True:
            jumped = labels[labels]
            if np.array_equal(jumped, labels):
                break
            labels = jumped
        if np.array_equal(labels, before):
            return labels


def components(a: np.ndarray, b: np.ndarray) -> dict:
    """``{node: smallest node of its component}`` for the edges ``a[i] -- b[i]``."""
    nodes, inverse = np.unique(np.concatenate([np.asarray(a), np.asarray(b)]), return_inverse=True)
    n_edges = len(a)
    labels = component_labels(inverse[:n_edges], inverse[n_edges:], len(nodes))
    return dict(zip(nodes.tolist(), nodes[labels].tolist(), strict=True))
