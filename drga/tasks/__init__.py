"""The tasks a run can train: classification (``drga/tasks/classification/``) and translation
(``drga/tasks/translation/``), each with its data, evaluation and checkpoint loading beside its task.

Nothing is re-exported here: a task's lower modules (data, evaluation, loading) sit below the
runner in the layers (docs/architecture.md), its ``task`` module above it.
"""
