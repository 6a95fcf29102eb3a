"""Where the module is, and the excerpts of its source the notebooks show."""

import os
import subprocess
import sys

import pytest

from trafikey_lab.build import LIBRARY, c_excerpt, module_path


def test_module_path_is_the_built_library():
    assert module_path() == LIBRARY and LIBRARY.is_file()


def test_c_excerpt_runs_from_one_line_through_another():
    text = c_excerpt("void trafikey_decide_member", "NEED_EPOCH;")
    assert text.splitlines()[0].startswith("void trafikey_decide_member(")
    assert text.splitlines()[-1].strip() == "out->need = NEED_EPOCH;"


def test_c_excerpt_defaults_to_the_function_s_closing_brace():
    lines = c_excerpt("int trafikey_valid_run_id(").splitlines()
    assert lines[0].startswith("int trafikey_valid_run_id(") and lines[-1] == "}"


def test_c_excerpt_searches_below_after():
    text = c_excerpt("/* Write pass. */", "hset_effect(ctx, keys[1].handle", after="static int extend_command(")
    # the first "Write pass" in the file is the claim's; below extend_command it is EXTEND's
    assert "zadd_effect(ctx, &keys[0], deadline, &argv[3], 1);" in text
    assert "claim.row" not in text


def test_c_excerpt_names_a_marker_it_cannot_find():
    with pytest.raises(ValueError, match="no line with 'no such line'"):
        c_excerpt("no such line")


def test_building_without_a_c_compiler_says_how_to_get_one(tmp_path):
    root = LIBRARY.parents[2]
    result = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(tmp_path),
         "--build-temp", str(tmp_path)],
        cwd=root, capture_output=True, text=True, timeout=120,
        env={**os.environ, "CC": "/nonexistent/cc"},
    )
    assert result.returncode != 0
    assert "trafikey lab needs a C compiler to build its Valkey module" in result.stderr
    assert "apt-get install gcc" in result.stderr and "xcode-select --install" in result.stderr
