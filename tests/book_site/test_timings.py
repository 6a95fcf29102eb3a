"""docs/benchmarks.md's section on the book's page: written by tools/book.py from what the
runtime tests measured, replaced whole when written again, and kept by `make bench`'s rewrite
of the rest of the file (tools/bench.py passes its report through with_page_section)."""

import pytest

from .tool import book

MEASURED = {"load_to_kernel_ready_s": 7.9, "load_to_first_answer_s": 12.5,
            "change_to_updated_text_ms": 61.0, "move_by_keyboard_ms": 39.7,
            "move_by_mouse_ms": 58.3, "history_move_ms": 140.0, "cores": 2,
            "load_average": "3.10, 2.50, 2.00"}
BENCH = "# Benchmarks\n\n## The machine\n\n- 2 cores\n\n## The claim\n\n| a | b |\n"


def test_the_section_says_each_timing_its_goal_met_or_missed_and_the_machines_load():
    section = book.timings_section(MEASURED)
    assert section.startswith(book.PAGE_SECTION + "\n")
    assert "2 cores, load average 3.10, 2.50, 2.00" in " ".join(section.split())
    assert "| 12.5 s | within 10 s cold: missed |" in section
    assert "| 39.7 ms | within 100 ms: met |" in section
    assert "| 140 ms | within 100 ms: missed |" in section


def test_a_run_that_measured_only_some_timings_writes_no_section():
    partial = {key: value for key, value in MEASURED.items() if key != "history_move_ms"}
    with pytest.raises(book.BookError, match="has no history_move_ms"):
        book.timings_section(partial)


def test_the_section_is_added_once_then_replaced_whole_and_the_rest_kept():
    first = book.with_page_section(BENCH, book.timings_section(MEASURED))
    assert first.startswith(BENCH)
    again = book.with_page_section(first, book.timings_section({**MEASURED, "cores": 4}))
    assert again.count(book.PAGE_SECTION) == 1
    assert "4 cores" in " ".join(again.split())
    assert "2 cores, load" not in " ".join(again.split())
    assert again.startswith(BENCH)


def test_a_bench_report_keeps_the_section_that_was_there():
    # what tools/bench.py does with the file it rewrites
    kept = book.page_section(book.with_page_section(BENCH, book.timings_section(MEASURED)))
    new_report = BENCH.replace("2 cores", "8 cores")
    rewritten = book.with_page_section(new_report, kept)
    assert rewritten.startswith(new_report)
    assert book.page_section(rewritten) == kept
    assert book.with_page_section(new_report, "") == new_report


def test_a_section_in_the_middle_of_the_file_is_found_up_to_the_next_heading():
    middle = BENCH.replace("## The claim", book.timings_section(MEASURED) + "\n## The claim")
    assert book.page_section(middle) == book.timings_section(MEASURED)

