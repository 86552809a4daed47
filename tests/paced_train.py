"""`drga train` (or any `drga` command) slowed down after every epoch's last.pt is written, for tests that
stop a run in the middle; its numbers are those of `drga`, the waits are all that differ.

- ``$DRGA_TEST_EPOCH_PAUSE``: seconds to pause after each epoch (tests/integration/test_tune.py, in-process).
- ``$DRGA_TEST_HOLD_AFTER_FIRST_EPOCH``: set, the run holds after its first epoch until it is killed: a run
  certainly killed mid-run, however fast the machine (tests/integration/test_sweep_ray.py sets it in the worker node's
  environment only: Ray workers inherit their node's environment, not the driver's).
"""

import os
import sys
import time

from drga.cli import main
from drga.runner.loop import PhaseRunner

PAUSE_SECONDS = float(os.environ.get("DRGA_TEST_EPOCH_PAUSE", "0"))
HOLD = os.environ.get("DRGA_TEST_HOLD_AFTER_FIRST_EPOCH", "") not in ("", "0")
save_last = PhaseRunner.save_last


def save_last_then_wait(runner: PhaseRunner) -> None:
    save_last(runner)
    time.sleep(PAUSE_SECONDS)
    while HOLD:  # until the node dies and takes this process with it
        time.sleep(1.0)


PhaseRunner.save_last = save_last_then_wait

if __name__ == "__main__":
    sys.exit(main())
