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

from reviews.web.api.models import ApiToken
from reviews.web.api.tokens import create_token, revoke


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


@login_required
@require_http_methods(["GET", "POST"])
def token_list(request: HttpRequest) -> HttpResponse:
    form = TokenForm(request.POST or None)
    secret = None
    if request.method == "POST" and form.is_valid():
        try:
            new = create_token(request.user, form.cleaned_data["name"], form.cleaned_data["scopes"])
        except ValueError as error:
            form.add_error("name", str(error))
        else:
            secret = new.secret
            form = TokenForm()
    tokens = ApiToken.objects.filter(user=request.user)
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
