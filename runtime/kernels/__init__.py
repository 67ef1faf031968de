"""Whole-batch kernels of the non-linear DBSP operators: join, distinct, aggregate."""
