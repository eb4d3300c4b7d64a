"""The package's version, in one place (cdcfast.__version__)."""
__version__ = "0.1.0"
