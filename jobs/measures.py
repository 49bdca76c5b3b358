"""spark-submit entry of ``sparkeval measures``.

Run: ``spark-submit jobs/measures.py [--config FILE] [OPTIONS]``
"""

import sys

from sparkeval.cli import main

if __name__ == "__main__":
    sys.exit(main(["measures", *sys.argv[1:]]))
