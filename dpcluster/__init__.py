"""dpcluster: run, compare and reproduce differentially private clustering algorithms."""

__version__ = "0.1.0"
