from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    name = "reviews"

    def ready(self) -> None:
        from reviews import batch_removal  # noqa: F401 (its receiver)
        from revreview import checks  # noqa: F401 (registers the start-up checks)
