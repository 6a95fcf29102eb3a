"""What `import trafikey_lab` offers, and the exception tree errors.py draws."""

import inspect
import re
from pathlib import Path

import trafikey_lab
from trafikey_lab import errors

PUBLIC = {
    "AttachedServer", "HISTORIES", "Executor", "InsecureServer", "LabError", "LabServer",
    "LiveExecutor", "ModelExecutor", "ModuleNotBuilt", "OwnedServer", "PortTaken", "Queue",
    "ReplyError",
    "RestartFailed", "RestartUnavailable", "ServerGone", "ServerNotFound", "ServerStartError",
    "ServerStopped", "Trace", "choose_server", "compare", "module_path", "play", "reading_line",
}


def test_the_package_exports_exactly_its_public_names():
    assert set(trafikey_lab.__all__) == PUBLIC
    assert len(trafikey_lab.__all__) == len(PUBLIC)


def test_every_exported_name_is_importable_from_the_package():
    missing = [name for name in trafikey_lab.__all__ if not hasattr(trafikey_lab, name)]
    assert missing == []


def _exceptions():
    return {name: cls for name, cls in inspect.getmembers(errors, inspect.isclass)
            if issubclass(cls, Exception) and cls.__module__ == errors.__name__}


def test_every_exception_of_errors_py_is_exported():
    assert set(_exceptions()) <= set(trafikey_lab.__all__)


def test_every_exception_is_drawn_in_errors_py_s_tree_under_its_parent():
    lines = [line for line in errors.__doc__.splitlines() if line.startswith("    ")]
    drawn = {line.split()[0]: (len(line) - len(line.lstrip())) for line in lines}
    assert set(drawn) == set(_exceptions())
    for name, cls in _exceptions().items():
        parents = [b.__name__ for b in cls.__bases__ if b.__module__ == errors.__name__]
        if parents:
            assert drawn[name] == drawn[parents[0]] + 2, name
        else:
            assert drawn[name] == 4, name


def test_a_refusal_is_not_a_setup_error_so_catching_lab_error_does_not_hide_it():
    assert not issubclass(errors.ReplyError, errors.LabError)
    assert issubclass(errors.ServerGone, errors.ServerStopped)


def _readme_layout() -> str:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme.split("## Layout", 1)[1]
    return section.split("```")[1]


def test_the_readme_layout_names_every_module_of_the_library_its_folders_and_tools():
    root = Path(__file__).resolve().parent.parent
    layout = _readme_layout()
    files = [*(root / "trafikey_lab").rglob("*.py"), *(root / "tools").rglob("*.py")]
    folders = {path.parent.name + "/" for path in files}
    unnamed = sorted(str(path.relative_to(root)) for path in files
                     if path.name not in layout and not (path.name == "__init__.py"
                                                         and path.parent.name + "/" in layout))
    assert "course/" in folders and "live/" in folders
    assert unnamed == [], "add a line for each to the README's Layout section"


def test_every_module_the_readme_layout_names_exists():
    root = Path(__file__).resolve().parent.parent
    named = set(re.findall(r"\b([a-z_]+\.py)\b", _readme_layout()))
    present = {path.name for path in root.rglob("*.py") if ".venv" not in path.parts}
    assert sorted(named - present) == []
