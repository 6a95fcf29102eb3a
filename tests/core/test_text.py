from trafikey_lab import epoch
from trafikey_lab.text import plain, reply, short


def test_short_keeps_the_first_and_last_four_characters_of_a_run_id():
    assert short(epoch.NOW) == short(epoch.NOW.decode()) == "3f2c…0812"


def test_short_quotes_a_value_that_is_not_run_id_long_so_it_is_not_mistaken_for_one():
    assert short(b"abc") == "'abc'"
    assert short(None) == "(none)"


def test_plain_decodes_bytes_and_names_an_absent_field():
    assert plain(b"active") == "active"
    assert plain(3) == "3"
    assert plain(None) == "(none)"


def test_reply_writes_nil_lists_and_run_ids_as_a_client_would_read_them():
    assert reply(None) == "nil"
    assert reply([b"job-1", epoch.NOW, 1]) == "[job-1, 3f2c…0812, 1]"
    assert reply(epoch.NOW.decode()) == "3f2c…0812"
    assert reply(7) == "7"
