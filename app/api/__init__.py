"""Reserved for the local HTTP API for integrators (ARCHITECTURE.md §9); nothing here yet."""
