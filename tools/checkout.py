"""A scratch copy of the repository, as a fresh clone would hold it, for the checks in tools/."""

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def repository_files() -> list[str]:
    """The files git tracks, and new ones it does not ignore (work not yet committed)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True).stdout.decode().split("\0")
    return [name for name in listed if name and (REPO / name).is_file()]


def copy_repository(target: Path) -> None:
    """Copies those files, with their modes, into target; nothing a local run left is taken."""
    for name in repository_files():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target / name)
