"""The assistant's tools, with the seed's names; one module per family."""
