"""The RunIdChecker in notebook 01, in the browser: type a value, read the verdict it shows.

The expected texts come from `read_value`, whose logic tests/widgets/test_run_id_checker.py
pins without a browser; here the question is whether what a learner types reaches the kernel
and whether the answer comes back whole, whatever the value: the dive's test values, a near
miss, a very long paste, emoji.
"""

import re

import pytest
from lab_pages.notebook import course_notebook
from lab_pages.widgets import RunIdCheckerView

from trafikey_lab import epoch
from trafikey_lab.readings import NAMED_VALUES, read_value

TYPED = {name: value for name, value in NAMED_VALUES.items() if value is not None}
"""The dive's values that can be typed (a missing field cannot: it is chosen instead)."""


@pytest.fixture(scope="module", params=[course_notebook("01")])
def checker(request, notebooks):
    """The checker on notebook 01's page; the id names the notebook, so -k "01" selects it."""
    run = notebooks.run(request.param)
    view = RunIdCheckerView(run.page)
    yield view
    view.root.scroll_into_view_if_needed()
    run.screenshot("run-id-checker")


def shape_line(value: bytes) -> str:
    reading = read_value(value)
    return f"valid_run_id → {str(reading.valid).lower()}: {reading.reason}"


def native_line(value: bytes) -> str:
    """The C module's row when it gives the model's answers (the model's flags, not its own)."""
    reading = read_value(value)
    return (f"trafikey_valid_run_id → {str(reading.valid).lower()}, trafikey_exempt → "
            f"{str(reading.exempt).lower()}: the C module agrees with both checks")


@pytest.mark.parametrize("name", TYPED)
def test_typing_each_of_the_dives_values_shows_its_verdict(checker, name):
    value = TYPED[name]
    checker.type(value.decode())
    reading = read_value(value)
    checker.shows("length", reading.length)
    checker.shows("shape check", shape_line(value))
    shown = checker.row("shape check").inner_text()
    # Only a real run_id's shape passes: NOW, and forty 0s (a valid run_id of another process).
    assert shown.startswith("valid_run_id → true") == (value in (epoch.NOW, epoch.ZERO))
    checker.shows("the module's C checks", native_line(value))
    for line in reading.tests:
        checker.shows_part("the dive's test", line)


def test_choosing_a_missing_lease_epoch_shows_no_bytes_to_check_and_exempt(checker):
    checker.choose("lease_epoch missing")
    checker.shows("length", "no field: nothing stored")
    checker.shows("shape check", "valid_run_id → n/a: there are no bytes to check")
    checker.shows("as a lease_epoch, swept under NOW", re.compile(r"^exempt → true: exempt"))
    assert checker.typed.input_value() == ""


def test_forty_characters_with_one_upper_case_letter_are_refused_and_the_letter_marked(checker):
    text = epoch.NOW.decode()
    at = next(i for i, c in enumerate(text) if c.isalpha())
    near_miss = text[:at] + text[at].upper() + text[at + 1:]
    checker.type(near_miss)
    checker.shows("length", "40 bytes")
    checker.shows("shape check", f"valid_run_id → false: byte {at + 1} is "
                                 f"b'{text[at].upper()}', not one of 0-9 a-f")
    assert checker.value.locator("mark").inner_text() == text[at].upper()
    checker.shows("the module's C checks", native_line(near_miss.encode()))


def test_a_very_long_paste_is_refused_by_its_length_and_shown_whole(checker):
    long = "f" * 10_000
    checker.paste(long)
    checker.shows("length", f"{len(long)} bytes")
    checker.shows("shape check", f"valid_run_id → false: {len(long)} bytes, not 40")
    assert checker.value.inner_text() == long
    checker.shows("the module's C checks", native_line(long.encode()))


def test_emoji_are_counted_in_bytes_and_refused_at_their_first_byte(checker):
    keys = "🔑" * 10  # ten characters, forty bytes: the length alone would pass
    checker.type(keys)
    checker.shows("length", "40 bytes (10 typed characters, UTF-8)")
    checker.shows("shape check", "valid_run_id → false: byte 1 is b'\\xf0', "
                                 "not one of 0-9 a-f")
    checker.shows("the module's C checks", native_line(keys.encode()))
