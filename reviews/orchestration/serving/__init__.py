"""Before any model is called: cached, fresh, failback or an error (decide), keyed on
the code that decides findings (code_version)."""
