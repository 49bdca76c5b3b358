"""Spark plans built on the driver: the evaluation pass, ratings, recommendations."""
