"""axe-core in the page: the accessibility rules a screen-reader user depends on.

axe.min.js comes from the axe-playwright-python package (a test dependency), injected as a
script: nothing is fetched from a network. `violations(page, ours)` runs axe over the whole
page and returns one line per offending node that is the course's: every violation inside
the nodes `ours` selects (the rendered outputs: the course's figures, tables, text and
widgets), and outside them any violation whose rule is not one the host application's own
markup is known to break (HOSTS_OWN). Rules about the page as a whole (PAGE_RULES) are not
counted anywhere.
"""

from importlib.resources import files

from playwright.sync_api import Page

AXE_JS = files("axe_playwright_python").joinpath("axe.min.js")

HOSTS_OWN = {
    "aria-allowed-attr": "JupyterLab's toolbar buttons (jp-button with aria-pressed)",
    "aria-input-field-name": "JupyterLab's code editors (CodeMirror's role=textbox, unnamed)",
    "aria-required-children": "JupyterLab's cell list (role=feed around non-article cells)",
    "button-name": "JupyterLab's heading-collapse buttons, which have no text",
    "link-name": "JupyterLab's and Voila's icon links",
}
"""Rules that JupyterLab 4.6 and Voila 0.5 break in their own markup on any notebook, seen by
running axe over a page with nothing of the course on it; outside the course's outputs these
are not counted."""

PAGE_RULES = {
    "region": "content outside landmarks: Voila's page has no <main>, and the page is the host's",
    "landmark-one-main": "the page's landmarks, which the host lays out",
    "page-has-heading-one": "the page's first heading, which the host lays out",
}
"""Rules about the page as a whole, not about any node of it: counted nowhere, since an output
cannot give the page its landmarks."""


def violations(page: Page, ours: str) -> list[str]:
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=AXE_JS.read_text())
    found = page.evaluate("""async (ours) => {
        const result = await window.axe.run(document, {resultTypes: ['violations']});
        return result.violations.flatMap(v => v.nodes.map(n => {
            const node = document.querySelector(n.target[0]);
            return {rule: v.id, target: n.target.join(' '), html: n.html.slice(0, 160),
                    ours: Boolean(node && node.closest(ours))};
        }));
    }""", ours)
    return [f"{v['rule']}: {v['target']} {v['html']}" for v in found
            if v["rule"] not in PAGE_RULES and (v["ours"] or v["rule"] not in HOSTS_OWN)]
