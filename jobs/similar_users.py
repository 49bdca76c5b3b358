"""spark-submit entry of ``sparkeval similar-users``.

Run: ``spark-submit jobs/similar_users.py [--config FILE] [OPTIONS]``
"""

import sys

from sparkeval.cli import main

if __name__ == "__main__":
    sys.exit(main(["similar-users", *sys.argv[1:]]))
