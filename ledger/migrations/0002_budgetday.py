# Written by hand: only BudgetDay (ledger.budget's embedded-mode counter).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('ledger', '0001_initial'),
    ]

    operations = [
        migrations.CreateModel(
            name='BudgetDay',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('day', models.DateField(unique=True)),
                ('reserved', models.BigIntegerField(default=0)),
            ],
            options={
                'ordering': ['-day'],
            },
        ),
    ]
