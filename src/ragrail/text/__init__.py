"""The ground floor's text helpers: ``guard`` (untrusted text made safe to print and to
escape into HTML), ``matching`` (how a fact is found in a text), ``tokens`` (words and
stems). They import nothing of ragrail but errors."""
