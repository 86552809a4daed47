"""This checkout's root, with its drga first on the import path: the import the scripts of
experiments/ make before drga's (all but own_sb3_example.py, an example to copy out).

``python experiments/<script>.py`` puts experiments/ on the path, so ``import checkout`` finds this
file. Putting the root ahead of the installed package makes a script run the drga beside it: a copy
of the repository frozen at the commit a study's result files name runs its own code, not that of
the checkout the virtual environment was installed from. Tests import the scripts the same way
(tests/scripts.py puts a script's folder on the path, as Python does).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
