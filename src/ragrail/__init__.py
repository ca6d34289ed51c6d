"""ragrail: regression tests for retrieval-augmented generation apps."""

__version__ = "0.1.0"
