"""spark-submit entry of ``sparkeval diversity``.

Run: ``spark-submit jobs/diversity.py [--config FILE] [OPTIONS]``
"""

import sys

from sparkeval.cli import main

if __name__ == "__main__":
    sys.exit(main(["diversity", *sys.argv[1:]]))
