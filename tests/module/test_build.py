"""Where the module is, and the excerpts of its source the notebooks show."""

import os
import subprocess
import sys

import pytest

from trafikey_lab.module import build
from trafikey_lab.module.build import LIBRARY, c_excerpt, module_path


def test_module_path_is_the_built_library():
    assert module_path() == LIBRARY
    assert LIBRARY.is_file()


def test_c_excerpt_cuts_a_whole_function_by_name():
    lines = c_excerpt("trafikey_valid_run_id").splitlines()
    assert lines[0].startswith("int trafikey_valid_run_id(")
    assert lines[-1] == "}"


def test_c_excerpt_finds_the_definition_not_a_call():
    # deadline_in_range is also called inside three handlers, on lines that must not match
    lines = c_excerpt("deadline_in_range").splitlines()
    assert lines[0].startswith("static int deadline_in_range(")
    assert lines[-1] == "}"


def test_c_excerpt_runs_from_one_line_of_code_through_another_within_the_function():
    text = c_excerpt("trafikey_decide_member", through="NEED_EPOCH;")
    assert text.splitlines()[0].startswith("void trafikey_decide_member(")
    assert text.splitlines()[-1].strip() == "out->need = NEED_EPOCH;"


def test_c_excerpt_searches_only_the_named_function():
    text = c_excerpt("extend_command", "zadd_effect(ctx, &keys[0]",
                     "hset_effect(ctx, keys[1].handle")
    # CLAIM's write pass comes first in the file; within extend_command it is EXTEND's
    assert "zadd_effect(ctx, &keys[0], deadline, &argv[3], 1);" in text
    assert "claim.row" not in text


def test_c_excerpt_brings_the_comment_right_above_its_first_line():
    text = c_excerpt("extend_command", "zadd_effect(ctx, &keys[0]",
                     "hset_effect(ctx, keys[1].handle")
    assert text.splitlines()[0].strip().startswith("/*")


def test_c_excerpt_does_not_anchor_on_comments():
    # "Read pass." is in claim_command, but only in a comment
    with pytest.raises(ValueError, match="comments are not searched"):
        c_excerpt("claim_command", "Read pass.")


def test_c_excerpt_names_a_function_it_cannot_find():
    with pytest.raises(ValueError, match="defines no function 'no_such_function'"):
        c_excerpt("no_such_function")


def test_c_excerpt_names_a_line_it_cannot_find_within_the_function():
    with pytest.raises(ValueError, match=r"no code line of claim_command .* 'no such line'"):
        c_excerpt("claim_command", "no such line")


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
    assert "apt-get install gcc" in result.stderr
    assert "xcode-select --install" in result.stderr


def test_c_excerpt_takes_the_definition_not_a_comment_that_names_the_function(
        monkeypatch, tmp_path):
    (tmp_path / "trafikey.c").write_text(
        "/* plan_claim(ctx) is called once per claim */\n"
        "static int plan_claim(int ctx)\n{\n    return ctx;\n}\n"
    )
    monkeypatch.setattr(build, "MODULE_DIR", tmp_path)
    assert c_excerpt("plan_claim").splitlines()[0] == "static int plan_claim(int ctx)"
