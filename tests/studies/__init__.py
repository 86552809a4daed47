"""studies tests (see tests/README.md)."""
