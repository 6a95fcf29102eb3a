"""Figures of the course: each function takes an ax, draws on it and returns what it drew."""
