"""A value read in the run_id's two roles, the dive's named values among them, and what the
load texts say of the server."""

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
from trafikey_lab.readings import (
    BAD_SHAPE,
    LOAD_WARNING,
    MODULE_LOAD_REFUSED,
    NAMED_VALUES,
    NO_RUN_ID_FIELD,
    read_value,
)
from trafikey_lab.sweep import Seen

MODULE_SOURCE = Path(__file__).resolve().parents[2] / "trafikey_lab" / "module" / "trafikey.c"


@pytest.mark.parametrize(("name", "reading"), [
    ("NOW", (True, "40 bytes, each one of 0-9 a-f", False, "counted")),
    ("NOW in upper case", (False, "byte 2 is b'F', not one of 0-9 a-f", True, "exempt")),
    ("NOW with a 3 appended", (False, "41 bytes, not 40", True, "exempt")),
    ("lease_epoch missing", (None, "there are no bytes to check", True, "exempt")),
    ("lease_epoch forty 0s", (True, "40 bytes, each one of 0-9 a-f", True, "exempt")),
    ("lease_epoch empty", (False, "0 bytes, not 40", True, "exempt")),
])
def test_each_named_value_gets_the_shape_checks_verdict_and_why_and_the_sweeps_reading(
        name, reading):
    r = read_value(NAMED_VALUES[name])
    assert (r.valid, r.reason, r.exempt, r.sweep.split(":")[0]) == reading


def test_the_sweep_reads_a_value_under_the_current_run_id_given_and_the_shape_check_does_not():
    reading = read_value(epoch.NOW, current=epoch.ZERO)
    assert reading.exempt
    assert reading.sweep.startswith("exempt: a well-formed run_id, but not this process's")
    assert reading.valid, "the shape check does not depend on current"


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


@pytest.mark.parametrize(("value", "reason"), [(b"", BAD_SHAPE), (epoch.NOW.upper(), BAD_SHAPE)])
def test_a_refused_load_quotes_the_c_warning_and_names_the_dives_error_as_the_dives(value, reason):
    load = read_value(value).load
    assert load.startswith(f'refused: OnLoad logs the warning "{LOAD_WARNING}{reason}"')
    assert load.endswith(f"the dive's Rust module refuses with {HOST_CALL_FAILED}")


def test_a_missing_lease_epoch_is_a_rows_field_and_no_value_load_reads():
    # kept apart from INFO's missing run_id, which refuses the load (issue 33)
    load = read_value(None).load
    assert load.startswith("n/a")
    assert "refused" not in load
    assert NO_RUN_ID_FIELD not in load


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
