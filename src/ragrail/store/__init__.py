"""What ragrail keeps between runs: the run history, the review-friendly baseline, and
the SQLite plumbing they share."""
