"""`python -m pi_proto.cli`: the `pi-proto` command."""

import sys

from .command import main

sys.exit(main())
