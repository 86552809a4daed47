"""`drga train` with a pause of $DRGA_TEST_EPOCH_PAUSE seconds after every epoch's last.pt is written: a
run slow enough to be killed in the middle, whose numbers are those of `drga train` (the pause is all
that differs). For `drga sweep --cli tests/paced_train.py` (tests/test_sweep_ray.py)."""

import os
import sys
import time

from drga.cli import main
from drga.runner.loop import PhaseRunner

PAUSE_SECONDS = float(os.environ.get("DRGA_TEST_EPOCH_PAUSE", "0"))
save_last = PhaseRunner.save_last


def save_last_then_pause(runner: PhaseRunner) -> None:
    save_last(runner)
    time.sleep(PAUSE_SECONDS)


PhaseRunner.save_last = save_last_then_pause

if __name__ == "__main__":
    sys.exit(main())
