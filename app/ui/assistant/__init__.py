"""The assistant panel: model picker, conversation, confirm cards, conversations list."""
