"""Benchmarks of the sandbox API server, run with `make bench` (python -m benchmarks).

Speed and memory are measured here, never asserted in tests: machines are shared and noisy.
"""
