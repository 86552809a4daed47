"""What keeping freed memory mapped (drga/runtime/allocator.py) does to training speed, side by side:
``python bench/switch.py allocator`` with the same options (see bench/switch.py).

    python bench/allocator.py --net disan transformer --train-fraction 0.1
"""

import sys

from switch import main

if __name__ == "__main__":
    main(["allocator", *sys.argv[1:]])
