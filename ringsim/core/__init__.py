"""The ground floor: plans as data, the split into segments, names, units, checks and the one error type."""
