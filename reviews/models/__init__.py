"""What the factory stores, one module per concern: datasets, batches (uploads), runs
(each agent's run), findings, verdicts, dismissals, policies (policy versions and rule
sets), applied merges. Django finds the models here; `from reviews.models import X`
is how the rest of the project reads them."""

from reviews.models.applied_merges import AppliedMerge
from reviews.models.batches import Batch, BatchFile, fold_names
from reviews.models.datasets import Dataset
from reviews.models.dismissals import Dismissal, DismissedProposal
from reviews.models.findings import Finding, Severity, findings_of
from reviews.models.policies import PolicyVersion, RuleSet
from reviews.models.runs import AgentRun, ReviewRun
from reviews.models.verdicts import VERDICT_LABELS, Verdict

__all__ = [
    "VERDICT_LABELS",
    "AgentRun",
    "AppliedMerge",
    "Batch",
    "BatchFile",
    "Dataset",
    "DismissedProposal",
    "Dismissal",
    "Finding",
    "PolicyVersion",
    "ReviewRun",
    "RuleSet",
    "Severity",
    "Verdict",
    "findings_of",
    "fold_names",
]
