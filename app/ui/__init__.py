"""The Qt front end: with ``app/main.py``, the only package that imports Qt."""
