"""The batch as tables (DuckDB): built once from a parsed batch, kept as Parquet beside
the upload, read by the team's rules, fill rates and breakdowns (docs/architecture.md)."""
