"""integration tests (see tests/README.md)."""
