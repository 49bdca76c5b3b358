"""spark-submit entry of ``sparkeval jvm-archive``.

Run: ``spark-submit jobs/jvm_archive.py [--config FILE] [OPTIONS]``
"""

import sys

from sparkeval.cli import main

if __name__ == "__main__":
    sys.exit(main(["jvm-archive", *sys.argv[1:]]))
