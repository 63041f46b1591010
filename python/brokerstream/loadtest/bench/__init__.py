"""Benchmarks: scripts that print figures (never timed tests). See docs/benchmarks.md."""
