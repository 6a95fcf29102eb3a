"""The real-browser suite: the course and the projector app in JupyterLab, in headless Chromium."""
