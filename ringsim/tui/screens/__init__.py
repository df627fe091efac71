"""The TUI's screens: the simulator and the key help."""
