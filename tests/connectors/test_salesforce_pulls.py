"""A dataset's Salesforce connection end to end against the loopback stand-in: connecting
(on the page, by the command, refused credentials that store nothing), pulls stored as a
sync's upload of Data Loader CSVs, a pull that stops and resumes, an expired session
that fails clearly and stores nothing, and, once the Salesforce export reader is
merged, a full pull, a change and an incremental pull reviewed as the same export."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from connectors import pulls, registry, tokens
from connectors.models import Connection, Pull
from reviews.models import Batch, Dataset
from reviews.orchestration.store.parsed import stored_files
from tests.connectors.salesforce_org import small_org
from tests.connectors.salesforce_standin import (
    CLIENT_ID,
    CLIENT_SECRET,
    StandIn,
    credentials_for,
    serving,
)
from tests.connectors.test_salesforce_connector import change, full_pull

pytestmark = pytest.mark.django_db


def connect(api: StandIn, name: str = "acme-sf", secret: str = CLIENT_SECRET) -> Connection:
    dataset = Dataset.objects.get_or_create(name=name)[0]
    sealed = registry.credentials_from("salesforce", credentials_for(api, secret))
    return pulls.connect(dataset, sealed, provider="salesforce")


def pull(connection: Connection, *, full: bool = False) -> Pull:
    connection.refresh_from_db()  # the last full pull's time decides the kind
    requested = pulls.request_pull(connection, full=full, by="test")
    done, _ = pulls.execute_pull(requested.pk, dispatch=False)
    return done


def files_of(batch: Batch) -> dict[str, bytes]:
    return {f.name: f.data for f in stored_files(batch)}


def test_connecting_checks_the_credentials_and_keeps_them_sealed(settings):
    with serving(small_org(), settings) as api:
        connection = connect(api)
        with pytest.raises(
            pulls.ConnectRefused, match="Salesforce refused the token: .*invalid_client"
        ):
            connect(api, "other", secret="wrong")
    # Nothing listens there any more: not a refusal of the credentials.
    settings.SALESFORCE_BACKOFF_SECONDS = 0
    with pytest.raises(pulls.ConnectRefused, match="^Salesforce could not be reached: "):
        pulls.connect(
            Dataset.objects.create(name="down"),
            registry.credentials_from("salesforce", credentials_for(api)),
            provider="salesforce",
        )
    assert (connection.provider, connection.provider_label) == ("salesforce", "Salesforce")
    assert (connection.portal_id, connection.company_currency) == ("00D5g000004ABCDEAZ", "USD")
    assert connection.time_zone == "Europe/Paris"
    assert CLIENT_SECRET not in connection.token_hint and CLIENT_ID[:4] in connection.token_hint
    assert CLIENT_SECRET in tokens.decrypt(connection.token_sealed)
    assert CLIENT_SECRET.encode() not in bytes(connection.token_sealed)
    assert not Connection.objects.filter(dataset__name="other").exists()
    # the org's address, where the fix plan links its records
    assert Dataset.objects.get(name="acme-sf").salesforce_url == api.url


def test_the_command_and_the_page_connect_a_salesforce_org(settings, django_user_model, client):
    with serving(small_org(), settings) as api:
        out = io.StringIO()
        call_command(
            "salesforce_connect", "--dataset", "acme-sf", "--domain", api.url,
            "--client-id", CLIENT_ID, "--client-secret", CLIENT_SECRET, stdout=out,
        )  # fmt: skip
        assert (
            "connected to Salesforce org 00D5g000004ABCDEAZ (USD, Europe/Paris)" in out.getvalue()
        )
        admin = django_user_model.objects.create_superuser("admin", password="x-pass-12345")
        client.force_login(admin)
        Dataset.objects.create(name="web-sf")
        fields = {"provider": "salesforce", "every_hours": 6, **credentials_for(api)}
        client.post(reverse("reviews:dataset_connect", args=["web-sf"]), fields)
        page = client.get(reverse("reviews:dataset", args=["web-sf"])).content.decode()
    connection = Connection.objects.get(dataset__name="web-sf")
    assert (connection.provider, connection.every_hours) == ("salesforce", 6)
    assert "Salesforce connection" in page and CLIENT_SECRET not in page
    with pytest.raises(Exception, match="My Domain"):
        call_command(
            "salesforce_connect", "--dataset", "x", "--domain", "https://a.test/path",
            "--client-id", CLIENT_ID, "--client-secret", "s",
        )  # fmt: skip


def test_a_pull_stores_one_data_loader_csv_per_object_as_the_syncs_upload(settings):
    org = small_org()
    with serving(org, settings) as api:
        api.state.page_size = 2
        connection = connect(api)
        done = pull(connection)
        expected = full_pull(api)
    assert done.batch is not None, done.error
    assert files_of(done.batch) == expected
    assert done.records == sum(len(v) for v in org.records.values()) and done.requests > 14
    assert not done.chunks.exists()


def test_an_expired_session_whose_renewal_is_refused_fails_clearly_and_stores_nothing(settings):
    with serving(small_org(), settings) as api:
        connection = connect(api)
        batches = Batch.objects.count()
        api.state.expire_sessions()
        api.state.secret = "rotated"  # the app's secret was changed in Salesforce
        failed = pull(connection)
    assert failed.status == Pull.Status.FAILED and failed.batch is None
    assert failed.error.startswith("Salesforce refused the token (400): invalid_client")
    assert failed.error.endswith("connect the dataset again")
    assert Batch.objects.count() == batches and not failed.chunks.exists()
    assert failed.progress == {}  # not resumed: new credentials may open another org


def test_an_interrupted_pull_resumes_from_its_checkpoint(settings):
    org = small_org()
    with serving(org, settings) as api:
        api.state.page_size = 1
        connection = connect(api)
        api.state.used, api.state.refuse_after = 0, 10
        stopped = pull(connection)
        assert stopped.status == Pull.Status.FAILED and stopped.progress["resumable"]
        assert "REQUEST_LIMIT_EXCEEDED" in stopped.error and stopped.chunks.exists()
        api.state.refuse_after, api.state.used = None, 0
        resumed = pull(connection)
        spent = api.state.used
        expected = full_pull(api)
    assert resumed.pk == stopped.pk and resumed.attempts == 2
    assert files_of(resumed.batch) == expected
    assert spent < api.state.used - spent  # less than a whole pull again


def test_full_then_incremental_pulls_review_as_the_exports_would(settings):
    from reviews.engine.ingest import UploadedFile
    from reviews.orchestration.intake.submit import submit
    from reviews.orchestration.run.tasks import start_review

    org = small_org()
    with serving(org, settings) as api:
        api.state.page_size = 2
        connection = connect(api)
        first = pull(connection)
        assert first.status == Pull.Status.DONE, first.error
        change(org)
        second = pull(connection)
        expected = full_pull(api)
    assert second.status == Pull.Status.DONE and second.kind == Pull.Kind.INCREMENTAL
    assert files_of(second.batch) == expected
    start_review.apply(kwargs={"run_id": second.run.pk})
    upload = [UploadedFile(name, data) for name, data in expected.items()]
    uploaded = submit(
        upload, dispatch=False, no_cache=True, dataset="upload", as_of=second.started_at
    )
    start_review.apply(kwargs={"run_id": uploaded.run.pk})
    pulled_run, uploaded_run = (
        r.__class__.objects.get(pk=r.pk) for r in (second.run, uploaded.run)
    )
    assert pulled_run.status == uploaded_run.status == "done"
    fingerprints = {
        r.pk: set(r.findings.values_list("fingerprint", flat=True))
        for r in (pulled_run, uploaded_run)
    }
    assert fingerprints[pulled_run.pk] == fingerprints[uploaded_run.pk] != set()
