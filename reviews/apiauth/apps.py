from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "reviews.apiauth"
    label = "api"
    verbose_name = "API"
