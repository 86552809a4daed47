"""Temporary: tests/regression_runs.py imports ``drga.nmt.trainer``; translation lives in drga/tasks/translation/."""
