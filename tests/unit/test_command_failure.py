"""drga/errors.py · command_failure: a module the environment lacks is one line (another Python than the project's ran
the command); a module of this repository that is missing is a bug, whose traceback is kept."""

import sys

import pytest

from drga.errors import command_failure, report_command_failure


def test_a_third_party_module_missing_is_one_line_naming_the_python(capsys):
    error = ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib")
    message, status = command_failure(error)
    assert status == 2 and f"this Python ({sys.executable}) has no module 'matplotlib'" in message and "make setup" in message
    assert report_command_failure(error, "translation_cpu.py: ") == 2
    assert capsys.readouterr().err == f"translation_cpu.py: {message}\n"


@pytest.mark.parametrize("name", ["drga.records", "experiments.x", "baselines"])
def test_a_module_of_this_repository_missing_is_a_bug(name):
    error = ModuleNotFoundError(f"No module named '{name}'", name=name)
    assert command_failure(error) is None
    with pytest.raises(ModuleNotFoundError):
        report_command_failure(error, "drga: ")
