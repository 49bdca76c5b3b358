"""spark-submit entry: `spark-submit jobs/diversity.py [--config FILE] OPTIONS`."""

import sys

from sparkeval.cli import main
from sparkeval.commands._config import argv_with_config

if __name__ == "__main__":
    sys.exit(main(["diversity", *argv_with_config(sys.argv[1:])]))
