"""The SDK's version: pyproject.toml reads it from here (hatch's version source)."""

__version__ = "0.1.0"
