"""The local HTTP API (``arxiu serve``): the seeds' wire dialects over one Starlette app.

:mod:`app.api.server` builds the app from :class:`~app.api.context.ApiContext` (the archive,
the users of :mod:`app.api.users`, the limits) and mounts each dialect's ``routes(ctx)``
behind :mod:`app.api.hardening`. :mod:`app.api.client` is an httpx client of the Dédalo
dialect (``arxiu ask --server URL``). Every dialect calls the same
:class:`~app.core.session.AssistantSession` façade the app and the CLI use.
"""
