"""What `import trafikey_lab` offers, and the exception tree errors.py draws."""

import inspect
import re
import subprocess
import sys
from pathlib import Path

import trafikey_lab
from trafikey_lab import errors
from trafikey_lab.live.client import ServerGone

PUBLIC = {
    "AttachedServer", "BadNamespace", "HISTORIES", "Executor", "InsecureServer", "LabError",
    "LabServer", "LiveExecutor", "ModelExecutor", "ModuleNotBuilt", "OwnedServer", "PortTaken",
    "Queue",
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
    """The lab's errors: errors.py's own, and ServerGone, which lives beside the redis client
    it extends (live/client.py) so that importing errors.py loads no redis."""
    own = {name: cls for name, cls in inspect.getmembers(errors, inspect.isclass)
           if issubclass(cls, Exception) and cls.__module__ == errors.__name__}
    return {**own, "ServerGone": ServerGone}


def test_every_exception_of_errors_py_is_exported():
    assert set(_exceptions()) <= set(trafikey_lab.__all__)


def test_every_exception_is_drawn_in_errors_py_s_tree_under_its_parent():
    lines = [line for line in errors.__doc__.splitlines() if line.startswith("    ")]
    drawn = {line.split()[0]: (len(line) - len(line.lstrip())) for line in lines}
    assert set(drawn) == set(_exceptions())
    for name, cls in _exceptions().items():
        parents = [b.__name__ for b in cls.__bases__ if b.__name__ in _exceptions()]
        if parents:
            assert drawn[name] == drawn[parents[0]] + 2, name
        else:
            assert drawn[name] == 4, name


def test_a_refusal_is_not_a_setup_error_so_catching_lab_error_does_not_hide_it():
    assert not issubclass(errors.ReplyError, errors.LabError)
    assert issubclass(ServerGone, errors.ServerStopped)


def _readme_layout() -> str:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## Layout", 1)[1]
    return section.split("```")[1]


def test_the_readme_layout_names_every_module_of_the_library_its_folders_and_tools():
    root = Path(__file__).resolve().parents[2]
    layout = _readme_layout()
    files = [*(root / "trafikey_lab").rglob("*.py"), *(root / "tools").rglob("*.py")]
    folders = {path.parent.name + "/" for path in files}
    unnamed = sorted(str(path.relative_to(root)) for path in files
                     if path.name not in layout and not (path.name == "__init__.py"
                                                         and path.parent.name + "/" in layout))
    assert "course/" in folders
    assert "live/" in folders
    assert unnamed == [], "add a line for each to the README's Layout section"


def test_every_module_the_readme_layout_names_exists():
    root = Path(__file__).resolve().parents[2]
    named = set(re.findall(r"\b([a-z_]+\.py)\b", _readme_layout()))
    present = {path.name for path in root.rglob("*.py") if ".venv" not in path.parts}
    assert sorted(named - present) == []


def test_importing_the_pure_core_loads_no_client_no_server_kind_and_no_plotting():
    # A fresh interpreter: this one has loaded everything already.
    probe = (
        "import sys\n"
        "import trafikey_lab.epoch, trafikey_lab.sweep, trafikey_lab.model\n"
        "import trafikey_lab.stories, trafikey_lab.player, trafikey_lab.schedule\n"
        "heavy = ('redis', 'matplotlib', 'ipywidgets', 'trafikey_lab.live')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True).stdout.strip()
    assert loaded == "[]"


def test_the_package_face_loads_a_name_only_when_it_is_asked_for():
    probe = (
        "import sys, trafikey_lab\n"
        "before = 'trafikey_lab.live.owned' in sys.modules\n"
        "trafikey_lab.OwnedServer\n"
        "print(before, 'trafikey_lab.live.owned' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True"]
