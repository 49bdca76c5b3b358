"""spark-submit entry point: ``spark-submit jobs/evaluate.py --config conf/demo.yaml``."""

import sys

from sparkeval.cli import main

if __name__ == "__main__":
    sys.exit(main(["evaluate", *sys.argv[1:]]))
