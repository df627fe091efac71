"""The TUI's screens: the simulator, the key help and a lesson section at full width."""
