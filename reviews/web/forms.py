"""Dashboard forms: the upload, the break-glass reason and the runs-list filter."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile as DjangoUploadedFile

from reviews.models import ReviewRun, Verdict

ACCEPTED_TYPES = (
    ".json,.csv,.tsv,.txt,.xlsx,.xlsm,.xls,.zip,application/json,text/csv,application/zip,"
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet,"
    "application/vnd.ms-excel"
)


class MultipleFileInput(forms.FileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """A file field that takes several files (a HubSpot export is up to three CSVs).
    An empty file passes here: the ingest refuses it, with the upload kept."""

    widget = MultipleFileInput

    def __init__(self, **kwargs) -> None:
        super().__init__(allow_empty_file=True, **kwargs)

    def clean(self, data, initial=None) -> list[DjangoUploadedFile]:
        files = data if isinstance(data, list | tuple) else [data] if data else []
        if not files:
            raise forms.ValidationError(self.error_messages["required"], code="required")
        clean_one = super().clean
        return [clean_one(f, initial) for f in files]


class UploadForm(forms.Form):
    files = MultipleFileField(
        label="Batch files",
        help_text=(
            "One JSON batch, one to three HubSpot CSV/XLSX/XLS exports or CRM API JSON "
            "files, or a ZIP holding them; add HubSpot's pipelines response "
            "(GET /crm/v3/pipelines/deals) to teach the dataset its deal pipelines."
        ),
        widget=MultipleFileInput(attrs={"accept": ACCEPTED_TYPES}),
    )
    dataset = forms.CharField(
        label="Dataset",
        required=False,
        max_length=200,
        help_text="Optional. The CRM this export is a sync of: it is reviewed against the "
        "dataset's previous sync. Wins over the batch's own \"dataset\" key.",
        widget=forms.TextInput(attrs={"list": "dataset-names", "autocomplete": "off"}),
    )
    as_of = forms.DateTimeField(
        label="As of (UTC)",
        required=False,
        help_text="Optional. Date rules are computed against this time; "
        "without it, the batch's exportedAt, the newest Last Modified Date of a "
        "HubSpot or Salesforce export, or the upload time is used.",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
    )

    # Where the batch goes: a choice of the user's workspaces (where they may upload),
    # shown when there are several; with one, it is that one.
    workspace = forms.TypedChoiceField(
        label="Workspace", coerce=int, required=False, empty_value=None, choices=()
    )

    def __init__(self, *args, workspaces: list[tuple[int, str]] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if workspaces is None:  # the database is down: the id is checked at import
            self.fields["workspace"] = forms.IntegerField(
                required=False, widget=forms.HiddenInput, min_value=1
            )
            return
        field = self.fields["workspace"]
        field.choices = workspaces
        if len(workspaces) <= 1:
            field.widget = forms.HiddenInput()

    def clean_files(self) -> list[DjangoUploadedFile]:
        files = self.cleaned_data["files"]
        total = sum(f.size or 0 for f in files)
        # Checked before any byte is read into memory; submit() checks again.
        if total > settings.MAX_UPLOAD_BYTES:
            raise forms.ValidationError(
                f"upload is {total:,} bytes; the limit is {settings.MAX_UPLOAD_BYTES:,} bytes "
                "(MAX_UPLOAD_BYTES)",
                code="too_large",
            )
        return files


class DismissForm(forms.Form):
    reason = forms.CharField(
        max_length=2000,
        widget=forms.TextInput(
            attrs={"placeholder": "Why this is not a problem (e.g. two subsidiaries)"}
        ),
    )


class BreakGlassForm(forms.Form):
    reason = forms.CharField(
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "Why this batch may go through"}),
        help_text="Recorded with your name beside the original verdict.",
    )


BROKEN_GLASS = "break_glass"


class RunFilterForm(forms.Form):
    q = forms.CharField(
        required=False,
        max_length=200,
        label="Search",
        widget=forms.SearchInput(attrs={"placeholder": "batch id, file name or record id"}),
    )
    verdict = forms.ChoiceField(
        required=False,
        choices=[("", "any verdict"), *Verdict.Decision.choices, (BROKEN_GLASS, "Break glass")],
    )
    mode = forms.ChoiceField(required=False, choices=[("", "any mode"), *ReviewRun.Mode.choices])
    tier = forms.ChoiceField(required=False, choices=[("", "any tier"), *ReviewRun.Tier.choices])
    date_from = forms.DateField(
        required=False, label="From", widget=forms.DateInput(attrs={"type": "date"})
    )
    date_to = forms.DateField(
        required=False, label="To", widget=forms.DateInput(attrs={"type": "date"})
    )
