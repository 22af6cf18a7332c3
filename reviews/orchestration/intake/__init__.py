"""Every door an upload comes in by (dashboard, API, spool import, sweep): stored, then
parsed here or by a worker, then accepted for review."""
