"""The reviews admin, one module per concern: datasets (editable), batches, runs and
findings (read-only records, fast lists, re-run and CSV export as actions), dismissals
(undo as an action, and the findings action that dismisses) and applied merges. Django's
autodiscovery imports this package, and it imports them."""

from django.contrib import admin

# Importing each module registers its admin.
from reviews.admin import (  # noqa: F401
    applied_merges,
    batches,
    datasets,
    dismissals,
    findings,
    runs,
)

# The list pages need the width at 1366 px more than a second menu beside them.
admin.site.enable_nav_sidebar = False
