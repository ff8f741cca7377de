"""bnilp: exact Bayesian network structure learning with credible sets (see README)."""

__version__ = "0.1.0"
