"""ringsim's face: a Textual TUI over one Simulation (imports Textual; `import ringsim` does not)."""
