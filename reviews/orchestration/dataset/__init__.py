"""A dataset's rows: its baseline for the next sync, dismissals, policy versions and
replay, and its deal pipelines."""
