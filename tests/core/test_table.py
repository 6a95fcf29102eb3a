"""The table the notebooks and the widget show."""

from trafikey_lab.table import Table


def test_table_prints_aligned_columns_and_escapes_html():
    table = Table(("a", "long name"), (("<x>", "1; 2"),))
    assert repr(table).splitlines() == ["a    long name", "---  ---------", "<x>  1; 2"]
    assert "<td style='text-align:left'>&lt;x&gt;</td>" in table._repr_html_()
    assert "1<br>2" in table._repr_html_()
