"""The TUI's widgets, one per module; each has a show() that takes what the Simulation holds."""
