"""The pipeline's defaults, apart from the pipeline: reading a config needs them, and
should not load the retrievers and the call layer to get two numbers."""

DEFAULT_TOP_K = 3
DEFAULT_MIN_SCORE = 0.2
