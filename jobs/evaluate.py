"""spark-submit entry of ``sparkeval evaluate``.

Run: ``spark-submit jobs/evaluate.py [--config FILE] [OPTIONS]``
"""

import sys

from sparkeval.cli import main

if __name__ == "__main__":
    sys.exit(main(["evaluate", *sys.argv[1:]]))
