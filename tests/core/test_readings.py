"""A value read in the run_id's two roles, the table of the dive's named values, what the load
texts say of the server, and notebook 01's diagnostic question."""

import re
import subprocess
from pathlib import Path

import pytest
import redis

from trafikey_lab import epoch
from trafikey_lab.live.owned import server_binary
from trafikey_lab.model import HOST_CALL_FAILED
from trafikey_lab.module import native
from trafikey_lab.module.build import module_path
from trafikey_lab.questions import ONE_VALUE_PER_PROCESS as QUESTION
from trafikey_lab.readings import (
    BAD_SHAPE,
    LOAD_WARNING,
    MODULE_LOAD_REFUSED,
    NAMED_VALUES,
    NO_RUN_ID_FIELD,
    read_value,
    readings_table,
)
from trafikey_lab.sweep import Seen
from trafikey_lab.widgets.diagnostic import Diagnostic

MODULE_SOURCE = Path(__file__).resolve().parents[2] / "trafikey_lab" / "module" / "trafikey.c"


def rows_by_name(current: bytes = epoch.NOW) -> dict[str, tuple[str, ...]]:
    return {row[0]: row[1:] for row in readings_table(current).rows}


def test_the_table_has_one_row_per_named_value_in_the_tests_order():
    assert [row[0] for row in readings_table().rows] == list(NAMED_VALUES)


@pytest.mark.parametrize(("name", "row"), [
    ("NOW", ("True", "cached", "False", "counted", "this process's stamp",
             "40 bytes, each one of 0-9 a-f")),
    ("NOW in upper case", ("False", "refused", "True", "exempt", "other bytes: capitals",
                           "byte 2 is b'F', not one of 0-9 a-f")),
    ("NOW with a 3 appended", ("False", "refused", "True", "exempt", "other bytes",
                               "41 bytes, not 40")),
    ("lease_epoch missing", ("None", "refused", "True", "exempt", "no stamp",
                             "there are no bytes to check")),
    ("lease_epoch forty 0s", ("True", "cached", "True", "exempt", "another process's stamp",
                              "40 bytes, each one of 0-9 a-f")),
    ("lease_epoch empty", ("False", "refused", "True", "exempt", "other bytes",
                           "0 bytes, not 40")),
])
def test_each_row_gives_the_load_and_the_sweep_of_its_value_and_why(name, row):
    assert rows_by_name()[name] == row


def test_the_exemption_column_is_read_under_the_current_run_id_given():
    rows = rows_by_name(current=epoch.ZERO)
    assert rows["lease_epoch forty 0s"][2:5] == ("False", "counted", "this process's stamp")
    assert rows["NOW"][2:5] == ("True", "exempt", "another process's stamp")
    assert rows["NOW"][:2] == ("True", "cached"), "the shape check does not depend on current"


def test_every_row_says_what_read_value_says_of_its_value():
    for name, (valid, load, exempt, sweep, sweep_why, reason) in rows_by_name().items():
        reading = read_value(NAMED_VALUES[name])
        assert (valid, exempt, reason) == (str(reading.valid), str(reading.exempt), reading.reason)
        assert reading.load.startswith(load)
        assert reading.sweep.startswith(sweep)
        assert sweep_why == reading.sweep_why


def test_the_table_prints_as_aligned_columns_under_its_header():
    lines = repr(readings_table()).splitlines()
    assert re.split(r"\s{2,}", lines[0]) == ["value", "valid", "at load", "exempt", "sweep",
                                             "why (sweep)", "why (shape check)"]
    assert re.split(r"\s{2,}", lines[2]) == ["NOW", "True", "cached", "False", "counted",
                                             "this process's stamp",
                                             "40 bytes, each one of 0-9 a-f"]
    assert len(lines) == 2 + len(NAMED_VALUES)


# -- why a stored value is exempt: because it is not this process's stamp -------------------


@pytest.mark.parametrize(("value", "why"), [
    (None, "there is no stamp, so it is not this process's"),
    (epoch.ZERO, "a well-formed run_id, but not this process's"),
    (epoch.NOW.upper(), "these bytes differ from this process's run_id only in case"),
    (b"", "these bytes differ from this process's run_id (0 bytes against 40)"),
    (b"written by hand", "these bytes differ from this process's run_id (15 bytes against 40)"),
    (epoch.NOW[:39] + b"g", "these bytes differ from this process's run_id, so they are not its"),
])
def test_each_exempt_value_says_why_it_is_not_this_processs_stamp(value, why):
    reading = read_value(value)
    assert reading.exempt
    assert reading.sweep.startswith(f"exempt: {why}")
    assert "stalled untouched" in reading.sweep


@pytest.mark.parametrize("value", [None, epoch.NOW.upper(), b"", b"written by hand"])
def test_an_exempt_value_that_no_restart_explains_does_not_blame_a_restart(value):
    assert "restart" not in read_value(value).sweep


def test_a_foreign_run_id_names_a_restart_only_as_one_way_to_get_one():
    assert "this server before a restart, another server, or bytes some tool wrote" in (
        read_value(epoch.ZERO).sweep)


def test_only_this_processs_stamp_is_counted_and_says_so():
    reading = read_value(epoch.ZERO, current=epoch.ZERO)
    assert not reading.exempt
    assert reading.sweep.startswith("counted: the stamp is this process's run_id")


@pytest.mark.parametrize(("stalled", "max_stalled", "kind"), [
    (b"1", 3, "recovered"), (b"2", 3, "dead"), (b"4", 3, "dead"), (None, 1, "dead")])
def test_a_counted_stall_is_dead_once_stalled_plus_one_reaches_or_passes_the_budget(
        stalled, max_stalled, kind):
    """What the counted reading says of the budget, put to the C decision: a stored stalled
    already past max_stalled (4 against 3) dies too, with 5."""
    assert "dead once it reaches or passes it" in read_value(epoch.NOW).sweep
    seen = Seen(type="hash", group=None, epoch=epoch.NOW, stalled=stalled)
    verdict = native.decide_member(epoch.NOW, max_stalled, seen)
    assert verdict.kind == kind
    assert verdict.stalled == int(stalled or 0) + 1


# -- what the load texts say: the C's own words, and the dive's ------------------------------


def test_the_load_reasons_and_warning_are_the_c_modules_own_words():
    source = MODULE_SOURCE.read_text()
    assert f'reason = "{NO_RUN_ID_FIELD}";' in source
    assert f'reason = "{BAD_SHAPE}";' in source
    assert f'"warning", "{LOAD_WARNING}%s", reason' in source


@pytest.mark.parametrize(("value", "reason"), [(None, NO_RUN_ID_FIELD), (b"", BAD_SHAPE),
                                           (epoch.NOW.upper(), BAD_SHAPE)])
def test_a_refused_load_quotes_the_c_warning_and_names_the_dives_error_as_the_dives(value, reason):
    load = read_value(value).load
    assert load.startswith(f'refused: OnLoad logs the warning "{LOAD_WARNING}{reason}"')
    assert load.endswith(f"the dive's Rust module refuses with {HOST_CALL_FAILED}")


def test_a_valid_run_id_is_cached_until_the_process_ends_or_the_module_is_unloaded():
    load = read_value(epoch.ZERO).load
    assert load.startswith("cached: load_epoch copies these 40 bytes into cached_run_id")
    assert "second load keeps" not in load


def test_a_second_load_is_refused_and_a_reload_after_unload_reads_the_run_id_afresh(servers):
    """What notebook 01 says of the cache: a second MODULE LOAD is refused before the epoch
    is read (the name is busy), MODULE UNLOAD unmaps the library and its statics, and a load
    after it reads the same process's run_id again and stamps with it."""
    server = servers(admin_commands=True)
    client, path = server.client, str(module_path())
    with pytest.raises(redis.ResponseError, match=re.escape(MODULE_LOAD_REFUSED)):
        client.execute_command("MODULE", "LOAD", path)
    assert "trafikey: a module named trafikey is already loaded" in server.log_tail()
    client.execute_command("MODULE", "UNLOAD", "trafikey")
    assert path not in Path(f"/proc/{server.pid}/maps").read_text()
    client.execute_command("MODULE", "LOAD", path)
    client.execute_command("HSET", "{r}:job:a", "state", "pending")
    client.execute_command("ZADD", "{r}:pending", 0, "a")
    assert client.execute_command("EMQ.CLAIM", "{r}:pending", "{r}:active", "{r}:job:", 60_000)
    assert client.hget("{r}:job:a", "lease_epoch").decode() == server.run_id


def test_a_server_whose_loadmodule_refuses_exits_at_startup_and_says_why(tmp_path):
    """The other half of 'a refused load': at startup the server does not start. A second
    --loadmodule of the module is refused by OnLoad (the name is busy), as a bad run_id would
    be, and the server aborts."""
    path = str(module_path())
    started = subprocess.run(
        [str(server_binary()), "--port", "0", "--save", "", "--dir", str(tmp_path),
         "--loadmodule", path, "--loadmodule", path],
        capture_output=True, text=True, timeout=60,
    )
    assert started.returncode != 0
    assert "trafikey: a module named trafikey is already loaded" in started.stdout
    assert f"Can't load module from {path}: server aborting" in started.stdout


# -- the diagnostic question -----------------------------------------------------------------

def stamp_each_option_counts(r: bytes) -> list[bytes | None]:
    """For each option, in order, a stored stamp that the option says the sweep counts under
    the run_id r."""
    return [epoch.ZERO, r.upper(), r, b"written by another tool", None]


def test_the_question_has_one_right_option_and_every_wrong_one_names_its_misconception():
    q = QUESTION
    assert [option.right for option in q.options] == [False, False, True, False, False]
    assert all(option.misconception for option in q.options if not option.right)
    misconceptions = " / ".join(option.misconception or "" for option in q.options)
    assert "the sweep re-checks the stamp's shape" in misconceptions
    assert "exempt means the server restarted" in misconceptions


def test_the_c_counts_only_the_stamp_the_right_option_names():
    counted = [not native.exempt(stamp, epoch.NOW) for stamp in stamp_each_option_counts(epoch.NOW)]
    assert counted == [option.right for option in QUESTION.options]


def test_the_options_whys_name_the_c_function_that_decides_each_step():
    shape, _, right, _, _ = QUESTION.options
    assert "exempt under any R but forty 0s itself" in shape.why
    assert native.exempt(epoch.ZERO, epoch.NOW)
    assert not native.exempt(epoch.ZERO, epoch.ZERO)
    assert right.why.startswith("trafikey_exempt decides the exemption")
    assert "trafikey_decide_member counts" in right.why
    assert "never counts a lane row" in right.why
    lane = Seen(type="hash", group=b"g", epoch=epoch.NOW, stalled=b"0")
    assert native.decide_member(epoch.NOW, 1, lane).kind == "lane"


def test_the_live_sweep_without_any_restart_counts_only_the_right_options_stamp(live, queue):
    stamps = stamp_each_option_counts(live.run_id.encode())
    for number, stamp in enumerate(stamps):
        fields = ["state", "active"] + ([] if stamp is None else ["lease_epoch", stamp])
        live.call("HSET", queue.row_key(f"job-{number}"), *fields)
        live.call("ZADD", queue.active, 1, f"job-{number}")
    live.sweep(queue, 10)
    counted = [live.row(queue, f"job-{number}").get(b"stalled") == b"1"
               for number in range(len(stamps))]
    assert counted == [option.right for option in QUESTION.options]


def test_choosing_a_wrong_option_names_its_misconception_and_the_right_one_says_right():
    q = Diagnostic(QUESTION)
    q.choose("B")
    assert "the stamp comparison ignores case" in q.answer.value
    q.choose("C")
    assert q.answer.value.startswith("<p>✓ Right.")
