import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("reviews", "0009_big_run_writes")]

    operations = [
        migrations.AddField(
            model_name="dataset",
            name="hubspot_portal_id",
            field=models.CharField(
                blank=True,
                default="",
                help_text="The HubSpot account's Hub ID: tasks in the fix plan link to its records.",
                max_length=20,
                validators=[
                    django.core.validators.RegexValidator(
                        "^[0-9]+$", "a HubSpot portal (Hub) id is a number"
                    )
                ],
                verbose_name="HubSpot portal id",
            ),
        ),
    ]
