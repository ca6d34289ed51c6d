"""After the app ships: production logs (ingest, redaction, storage), online signals per
version and period, A/B readouts between variants, scoring logged answers without labels,
and sampling them back into the golden set."""
