"""A run's fix plan from its stored batch, and merges applied in the CRM."""
