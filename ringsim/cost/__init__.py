"""What a plan costs: the textbook α-β-γ model over ports, and the topologies it prices on."""
