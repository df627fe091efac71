"""One scenario stepped and told: the simulation behind the walkthrough, the TUI and the lessons."""
