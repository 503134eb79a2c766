"""The agent: request validation, the loop, prompts, the egress gate, change plans, events."""
