"""The engine-neutral refresh layer: sources read through an `Engine`, a compiled
program stepped once per refresh, view outputs as parquet runs and a checkpoint,
committed exactly once (docs/spark.md). It imports no pyspark: an engine hands it
Arrow schemas and Arrow batches; runtime/spark is the Spark engine."""
