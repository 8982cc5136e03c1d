"""Benchmarks that span packages (run as python -m benchmarks.NAME)."""
