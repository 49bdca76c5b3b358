"""The job framework every command is built on.

A command is a typed config (:class:`~sparkeval.job.config.JobConfig`, one field per
option, declared once with its help text), a ``run(spark, config)`` that returns a
result object, and a :class:`~sparkeval.job.command.Command` record that names them;
:mod:`sparkeval.commands` lists the command modules. The CLI only parses
(:mod:`sparkeval.cli`); loading (YAML file + command line + keyword arguments),
starting Spark, logging and exit codes are the same for every command
(:mod:`sparkeval.job.runner`).
"""
