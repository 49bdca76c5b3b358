"""spark-submit entry of ``sparkeval rating-errors``.

Run: ``spark-submit jobs/rating_errors.py [--config FILE] [OPTIONS]``
"""

import sys

from sparkeval.cli import main

if __name__ == "__main__":
    sys.exit(main(["rating-errors", *sys.argv[1:]]))
