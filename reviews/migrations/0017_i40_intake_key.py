from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0016_i34_requested"),
    ]

    operations = [
        migrations.AddField(
            model_name="batch",
            name="intake_key",
            field=models.CharField(blank=True, max_length=32, null=True, unique=True),
        ),
    ]
