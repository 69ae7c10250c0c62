"""One module per policy kind that judges actions: what that kind's rules say about one action."""
