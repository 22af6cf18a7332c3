"""A team's own rules (docs/rules.md#a-teams-own-rules): rule files (rulefile), the
`when` language and its allow-list (language), and running them over a batch's tables
in the sandbox (run)."""
