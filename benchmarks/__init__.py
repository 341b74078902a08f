"""Benchmarks of the library against torch and a reference GPT, and of the book itself (`make bench`,
benchmarks/run.py; results in benchmarks/results.md)."""
