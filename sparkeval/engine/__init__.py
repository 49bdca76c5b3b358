"""The evaluation engine, laid out by where its code runs.

* :mod:`sparkeval.engine.worker`: numpy code that runs inside Spark's Python workers
  (and in-process without Spark); it imports no pyspark.
* :mod:`sparkeval.engine.plans`: Spark plans built on the driver (DataFrame operations).
* :mod:`sparkeval.engine.transport`: how rows and results move between the two (Arrow
  payloads, local handoff files, result blobs, the per-query writer).
"""
