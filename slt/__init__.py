"""The sqllogictest harness: SQLite's conformance files run against dbspc (`dbspc slt`)."""
