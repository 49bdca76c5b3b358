"""spark-submit entry of ``sparkeval pack``.

Run: ``spark-submit jobs/pack.py [--config FILE] [OPTIONS]``
"""

import sys

from sparkeval.cli import main

if __name__ == "__main__":
    sys.exit(main(["pack", *sys.argv[1:]]))
