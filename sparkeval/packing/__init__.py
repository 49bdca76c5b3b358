"""A packed Python environment for executors that do not have sparkeval installed.

``sparkeval pack`` (:mod:`sparkeval.commands.pack`) builds a virtual environment holding
sparkeval and its runtime dependencies at the versions installed here (pyspark and py4j
left out: Spark gives them to its Python workers) and packs it with venv-pack, for
``spark-submit --archives ARCHIVE#environment --conf
spark.pyspark.python=./environment/bin/python``.
"""
