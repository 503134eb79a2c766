"""Arxiu's core: archive, index, models, tools and the agent. Never imports Qt."""
