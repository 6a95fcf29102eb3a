"""A value read in the run_id's two roles, and the table of the dive's named values."""

import pytest

from trafikey_lab import epoch
from trafikey_lab.readings import NAMED_VALUES, read_value, readings_table


def rows_by_name(current: bytes = epoch.NOW) -> dict[str, tuple[str, ...]]:
    return {row[0]: row[1:] for row in readings_table(current).rows}


def test_the_table_has_one_row_per_named_value_in_the_tests_order():
    assert [row[0] for row in readings_table().rows] == list(NAMED_VALUES)


@pytest.mark.parametrize("name, row", [
    ("NOW", ("True", "cached", "False", "counted", "40 characters, each one of 0-9 a-f")),
    ("NOW in upper case",
     ("False", "refused", "True", "exempt", "character 2 is b'F', not one of 0-9 a-f")),
    ("NOW with a 3 appended", ("False", "refused", "True", "exempt", "41 characters, not 40")),
    ("lease_epoch missing", ("None", "refused", "True", "exempt", "there are no bytes to check")),
    ("lease_epoch forty 0s",
     ("True", "cached", "True", "exempt", "40 characters, each one of 0-9 a-f")),
    ("lease_epoch empty", ("False", "refused", "True", "exempt", "0 characters, not 40")),
])
def test_each_row_gives_the_load_and_the_sweep_of_its_value(name, row):
    assert rows_by_name()[name] == row


def test_the_exemption_column_is_read_under_the_current_run_id_given():
    rows = rows_by_name(current=epoch.ZERO)
    assert rows["lease_epoch forty 0s"][2:4] == ("False", "counted")
    assert rows["NOW"][2:4] == ("True", "exempt")
    assert rows["NOW"][:2] == ("True", "cached"), "the shape check does not depend on current"


def test_every_row_says_what_read_value_says_of_its_value():
    for name, (valid, load, exempt, sweep, reason) in rows_by_name().items():
        reading = read_value(NAMED_VALUES[name])
        assert (valid, exempt, reason) == (str(reading.valid), str(reading.exempt), reading.reason)
        assert reading.load.startswith("cached") == (load == "cached")
        assert reading.sweep.startswith(sweep)


def test_the_table_prints_as_aligned_columns_under_its_header():
    lines = repr(readings_table()).splitlines()
    assert lines[0] == ("value                  valid  at load  exempt  sweep    "
                        "why the shape check said so")
    assert lines[2] == ("NOW                    True   cached   False   counted  "
                        "40 characters, each one of 0-9 a-f")
    assert len(lines) == 2 + len(NAMED_VALUES)
