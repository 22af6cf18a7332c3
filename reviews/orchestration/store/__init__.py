"""Where an upload lives: its bytes in the database (blob_store) or, while the
database is away, on disk (spool); batches not yet read (unread); the parse kept for
the next task (parsed)."""
