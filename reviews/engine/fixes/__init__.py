"""From findings to fixes: the merge plan with its survivors (fixplan, survivor) and
the owners' to-do list (fixtasks), in HubSpot's names (hubspot_names)."""
