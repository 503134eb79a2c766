"""The archive on PostgreSQL + pgvector: its schema, row-level security, copy and checksum.

A first stage of the shared archive (issue 24): the archive's tables with today's SQLite names
on a PostgreSQL server (:mod:`.schema`), opened from a ``postgresql://`` URL (:mod:`.connect`),
archivists' rights as group roles and row-level security (:mod:`.roles`), and
``arxiu archive copy`` / ``checksum`` between the two engines (:mod:`.transfer`,
:mod:`.checksum`). The app, the index and the agent still run on SQLite only.
"""
