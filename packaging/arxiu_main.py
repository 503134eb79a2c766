"""The frozen bundle's entry point: ``arxiu`` (the desktop app, or a CLI command).

``freeze_support`` lets the llama.cpp worker and the embedding worker, started with the ``spawn``
method, run inside the same executable instead of looking for a Python interpreter.
"""

import multiprocessing
import sys

from app.cli import main

if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(main())
