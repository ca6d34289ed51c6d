"""The system under test: the built-in pipeline (corpus, retrieval, prompt, answerers)
and the adapters for a team's own system (a Python function, an HTTP endpoint, an
outputs file)."""
