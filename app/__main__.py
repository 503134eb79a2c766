"""Run Arxiu with ``python -m app``."""

import sys

from app.cli import main

if __name__ == "__main__":  # spawned children (the llama.cpp worker) import this as __mp_main__
    sys.exit(main())
