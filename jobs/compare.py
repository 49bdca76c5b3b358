"""spark-submit entry of ``sparkeval compare``.

Run: ``spark-submit jobs/compare.py [--config FILE] [OPTIONS]``
"""

import sys

from sparkeval.cli import main

if __name__ == "__main__":
    sys.exit(main(["compare", *sys.argv[1:]]))
