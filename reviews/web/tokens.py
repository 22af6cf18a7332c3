"""Settings → API tokens: a signed-in user creates and revokes their own tokens. A new
token is shown once, on the answer to the POST that made it (never kept, never
redirected through a session)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from reviews.apiauth.models import ApiToken
from reviews.apiauth.tokens import create_token, revoke
from workspaces.access import workspaces_of
from workspaces.models import Workspace


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What uses it, e.g. “nightly export”.")
    scopes = forms.MultipleChoiceField(
        choices=[
            (ApiToken.Scope.UPLOAD, "upload: send batches, re-run, dismiss"),
            (ApiToken.Scope.READ, "read: runs, verdicts, datasets"),
        ],
        initial=ApiToken.Scope.values,
        widget=forms.CheckboxSelectMultiple,
    )
    # The one workspace the token acts for: a choice when the user has several.
    workspace = forms.ModelChoiceField(queryset=Workspace.objects.none(), empty_label=None)

    def __init__(self, *args, user=None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["workspace"]
        field.queryset = workspaces_of(user)
        if field.queryset.count() == 1:  # the only one: no choice to offer
            field.widget = forms.HiddenInput()
            field.required = False


@login_required
@require_http_methods(["GET", "POST"])
def token_list(request: HttpRequest) -> HttpResponse:
    form = TokenForm(request.POST or None, user=request.user)
    secret = None
    if request.method == "POST" and form.is_valid():
        try:
            data = form.cleaned_data
            new = create_token(
                request.user, data["name"], data["scopes"], workspace=data.get("workspace")
            )
        except ValueError as error:
            form.add_error("name", str(error))
        else:
            secret = new.secret
            form = TokenForm(user=request.user)
    tokens = ApiToken.objects.filter(user=request.user).select_related("workspace")
    context = {"form": form, "tokens": tokens, "secret": secret}
    return render(request, "reviews/tokens.html", context)


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    # Only the user's own tokens: anyone else's is a 404.
    token = get_object_or_404(ApiToken, pk=token_id, user=request.user)
    if revoke(ApiToken.objects.filter(pk=token.pk)):
        messages.success(request, f"Token “{token.name}” revoked; it no longer works.")
    return redirect("reviews:tokens")
