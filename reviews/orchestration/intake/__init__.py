"""Every door an upload comes in by (dashboard, API, spool import, sweep), through one
entry (entry.py): stored with what it asked for, then parsed here or by a worker, or
kept in the spool; then served (serve.py)."""
