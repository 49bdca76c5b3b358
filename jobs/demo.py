"""spark-submit entry of ``sparkeval demo``.

Run: ``spark-submit jobs/demo.py [--config FILE] [OPTIONS]``
"""

import sys

from sparkeval.cli import main

if __name__ == "__main__":
    sys.exit(main(["demo", *sys.argv[1:]]))
