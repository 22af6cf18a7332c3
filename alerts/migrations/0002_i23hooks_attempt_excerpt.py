"""An attempt keeps at most a short printable excerpt of a failed answer's body, apart
from our own account of what went wrong. Rows written before kept up to 300 characters
of the receiver's reply in `error` (an internal service's reply could carry its
secrets): those move to the excerpt, sanitised and cut to 200 characters."""

from django.db import migrations, models

EXCERPT_CHARS = 200


def sanitised(text: str) -> str:
    text = "".join(c if c.isprintable() else " " for c in text.replace("\ufffd", " "))
    return " ".join(text.split())[:EXCERPT_CHARS]


def move_bodies(apps, schema_editor):
    WebhookAttempt = apps.get_model("alerts", "WebhookAttempt")
    replied = WebhookAttempt.objects.filter(response_code__isnull=False).exclude(error="")
    for attempt in replied.iterator():
        attempt.excerpt = sanitised(attempt.error)
        attempt.error = ""
        attempt.save(update_fields=["excerpt", "error"])


class Migration(migrations.Migration):
    dependencies = [("alerts", "0001_webhooks")]

    operations = [
        migrations.AddField(
            model_name="webhookattempt",
            name="excerpt",
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.RunPython(move_bodies, migrations.RunPython.noop),
    ]
