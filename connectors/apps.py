from django.apps import AppConfig


class ConnectorsConfig(AppConfig):
    name = "connectors"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "CRM connections"
