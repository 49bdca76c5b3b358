"""Worker-side numpy: kernels glue, doc matching, exact sums (no pyspark imports)."""
