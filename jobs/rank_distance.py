"""spark-submit entry of ``sparkeval rank-distance``.

Run: ``spark-submit jobs/rank_distance.py [--config FILE] [OPTIONS]``
"""

import sys

from sparkeval.cli import main

if __name__ == "__main__":
    sys.exit(main(["rank-distance", *sys.argv[1:]]))
