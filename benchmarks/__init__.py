"""ember benchmarks against numpy and PyTorch: run `python -m benchmarks --help`."""
