"""`python -m evaluator ...`: the command line (evaluator/cli/)."""

import sys

from evaluator.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
