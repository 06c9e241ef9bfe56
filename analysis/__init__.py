"""Statistics, figures and the HTML report over the stored tables (DuckDB/Parquet only)."""
