"""Scorers: small pure functions of a case and its trace."""
