"""What commands, pages and the API hand to people: the run report, findings CSV and
the fix plan's files."""
