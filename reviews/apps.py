from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    name = "reviews"

    def ready(self) -> None:
        from django.conf import settings

        from reviews import batch_removal  # noqa: F401 (its receiver)
        from reviews.engine.tables import columns
        from revreview import checks  # noqa: F401 (registers the start-up checks)

        columns.configure(
            memory_mb=settings.DETECTOR_MEMORY_MB, spill_dir=settings.DETECTOR_SPILL_DIR
        )
