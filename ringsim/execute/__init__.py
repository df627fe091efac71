"""Running a plan for real: the Executor protocol, its factory, the NumPy and symbolic executors, the ledger and memory checks."""
