# What each of the team's own rules did on a run (docs/rules.md#a-teams-own-rules).

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0023_i36_fill_rates"),
    ]

    operations = [
        migrations.AddField(
            model_name="reviewrun",
            name="team_rules",
            field=models.JSONField(blank=True, default=list),
        ),
    ]
