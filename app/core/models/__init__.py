"""Chat models: one streaming protocol, one module per provider, the catalog."""
