"""Widgets of the course: small classes over the library, testable without a browser."""
