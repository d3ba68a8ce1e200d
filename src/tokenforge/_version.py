"""The package version (one definition, imported by the package and its modules)."""

__version__ = "0.1.0"
