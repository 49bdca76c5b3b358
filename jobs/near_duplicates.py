"""spark-submit entry of ``sparkeval near-duplicates``.

Run: ``spark-submit jobs/near_duplicates.py [--config FILE] [OPTIONS]``
"""

import sys

from sparkeval.cli import main

if __name__ == "__main__":
    sys.exit(main(["near-duplicates", *sys.argv[1:]]))
