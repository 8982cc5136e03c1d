"""``python -m model.score``: the batch-scoring command line, kept at its old name (see :mod:`model.batch.cli`)."""

import sys

from model.batch.cli import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
