"""``python -m renderer``: see :mod:`renderer.cli`."""

from __future__ import annotations

import sys

from renderer.cli import main

sys.exit(main())
