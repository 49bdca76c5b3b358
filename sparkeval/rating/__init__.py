"""The ``rating-errors`` command's config (:mod:`~sparkeval.rating.options`) and job body
(:mod:`~sparkeval.rating.job`); the command record is :mod:`sparkeval.commands.rating_errors`.
"""
