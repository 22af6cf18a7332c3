"""A run's fix plan from its stored batch (applied in the CRM by connectors/merges.py)."""
