"""Studies across algorithms: side-by-side counts and times, size sweeps, float error, and benchmarks."""
