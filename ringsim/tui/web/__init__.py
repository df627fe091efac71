"""The TUI in a browser: textual-serve's server, guarded, and the page it sends (focus, font)."""
