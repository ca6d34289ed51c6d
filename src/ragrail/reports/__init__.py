"""Reporters: render a RunResult (and its Diff) for people and machines."""
