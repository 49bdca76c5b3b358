"""``sparkeval jvm-archive``: write (or show, or remove) the driver JVM's class archive."""

from __future__ import annotations

import argparse
import time


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "jvm-archive",
        help="write the class archive that makes local Spark sessions start faster",
        description="Write a class-data archive of the driver JVM for this Java and "
        "pyspark (about 190 MB in the user cache directory, ~45 s to write). Local "
        "sessions started by sparkeval then map Spark's classes from it instead of "
        "loading them, which saves seconds per run. spark-submit is not affected.",
    )
    action = p.add_mutually_exclusive_group()
    action.add_argument("--status", action="store_true", help="only say whether one exists")
    action.add_argument("--remove", action="store_true", help="delete every archive")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from sparkeval import jvm_archive

    if args.remove:
        removed = jvm_archive.remove_archives()
        print(f"sparkeval: removed {len(removed)} JVM archive(s) from {jvm_archive.cache_dir()}")
        return 0
    path = jvm_archive.archive_path()
    if args.status:
        if path is not None:
            in_use = "in use" if jvm_archive.java_options() else "not in use (switched off)"
            print(f"sparkeval: JVM archive {path} ({path.stat().st_size >> 20} MiB), {in_use}")
        else:
            where = jvm_archive.cache_dir()
            print(f"sparkeval: no JVM archive for this Java and pyspark in {where}")
        return 0
    started = time.time()
    path = jvm_archive.build_archive()
    seconds = time.time() - started
    size = path.stat().st_size >> 20
    print(f"sparkeval: JVM archive written to {path} ({size} MiB) in {seconds:.0f} s")
    return 0
