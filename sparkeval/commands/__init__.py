"""Subcommands of the ``sparkeval`` CLI; each module offers ``add_parser(subparsers)``.

A module's ``add_parser`` adds its subparser and sets ``func`` (a callable taking the
parsed ``argparse.Namespace`` and returning an exit code) with ``set_defaults``.
"""

#: modules whose ``add_parser`` builds the CLI, in ``--help`` order
COMMAND_MODULES: tuple[str, ...] = (
    "sparkeval.commands.evaluate",
    "sparkeval.commands.measures",
    "sparkeval.commands.demo",
    "sparkeval.commands.compare",
    "sparkeval.commands.rank_distance",
    "sparkeval.commands.rating_errors",
    "sparkeval.commands.similar_users",
    "sparkeval.commands.near_duplicates",
    "sparkeval.commands.diversity",
    "sparkeval.commands.jvm_archive",
    "sparkeval.commands.pack",
)
