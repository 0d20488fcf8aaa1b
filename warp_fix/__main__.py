import sys

from warp_fix.cli import main

sys.exit(main())
