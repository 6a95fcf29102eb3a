"""Figures of the course: each static figure takes an ax, draws on it and returns what it drew;
the widgets' moving timelines are SVG text the library builds itself (svg.py), no matplotlib.
"""
