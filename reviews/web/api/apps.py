from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "reviews.web.api"
    label = "api"
    verbose_name = "API"
