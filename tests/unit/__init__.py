"""unit tests (see tests/README.md)."""
