"""Distributed execution (issue 12): a compiled circuit split into stages by key, run
once per bucket on Spark's executors with the runtime's own evaluators."""
