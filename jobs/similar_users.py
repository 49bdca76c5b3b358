"""spark-submit entry: `spark-submit jobs/similar_users.py [--config FILE] OPTIONS`."""

import sys

from sparkeval.cli import main
from sparkeval.commands._config import argv_with_config

if __name__ == "__main__":
    sys.exit(main(["similar-users", *argv_with_config(sys.argv[1:])]))
