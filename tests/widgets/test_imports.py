"""The two widgets that redraw a timeline run where the book's own Python runs them: in a page
with no matplotlib and no numpy."""

import subprocess
import sys

CONSTRUCT_BOTH = """
import sys
from trafikey_lab.widgets.explorable_lease import ExplorableLease
from trafikey_lab.widgets.lease_across_restart import LeaseAcrossRestart
lease = ExplorableLease()
lease.fields["sweep_at_ms"].value = 990
player = LeaseAcrossRestart()
player.history.value = "extended"
assert lease.figure.value.startswith("<svg ") and player.figure.value.startswith("<svg ")
print(sorted(name for name in sys.modules if name.split(".")[0] in ("matplotlib", "numpy")))
"""


def test_both_timeline_widgets_import_and_draw_with_neither_matplotlib_nor_numpy():
    # a fresh interpreter: this one has imported matplotlib for other tests
    run = subprocess.run([sys.executable, "-c", CONSTRUCT_BOTH], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]", f"imported: {run.stdout}"
