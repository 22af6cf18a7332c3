"""A dataset across its syncs: each finding new, open or resolved against the last
sync (compare), the team's versioned policy (policy) and proposals tuned from its
dismissals (tune)."""
