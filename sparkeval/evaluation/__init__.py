"""The ``evaluate`` command's config (:mod:`~sparkeval.evaluation.options`) and job body
(:mod:`~sparkeval.evaluation.job`); the command record is :mod:`sparkeval.commands.evaluate`.
"""
