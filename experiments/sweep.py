"""A grid of `drga train` runs (networks × data sets × seeds), several at a time, resumable: `drga sweep`.

Kept for the study scripts of experiments/ and the Makefile, which call it with the flags they always
did; every flag, file and rule is `drga sweep`'s (drga/sweep/cli.py, `drga sweep --help`). Run from a
checkout, it uses that checkout's drga.

    python experiments/sweep.py --nets lstm-sa cnn-sa --datasets subj mr --seeds 0 1 2 [--jobs 2] ...
"""

import sys

import checkout  # noqa: F401  (first: this checkout's drga)

from drga.sweep.cli import main

if __name__ == "__main__":
    sys.exit(main())
