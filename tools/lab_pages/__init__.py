"""JupyterLab and the course's pages in it, driven by Playwright: the server (lab), a notebook
run as a learner runs it (notebook) and the widgets as a page shows them (widgets). The browser
suite (tests/browser) and the hub's rehearsal (hub/rehearsal.py) both drive the course with
them, so they live with the tools, which the tests may import and the tools may not."""
