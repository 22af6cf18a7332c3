from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "reviews.apiauth"
    label = "api"
    verbose_name = "API"

    def ready(self) -> None:
        # An upload kept while the database was down names its token by digest; the
        # import (in orchestration, which does not import the web) checks it with ours.
        from reviews.apiauth.idempotency import store_keyed
        from reviews.apiauth.tokens import check_spooled_sender
        from reviews.orchestration.intake import spool_import, spool_senders

        spool_senders.register(spool_senders.TOKEN, check_spooled_sender)
        # And its Idempotency-Key is claimed for the batch the import stores.
        spool_import.register_keyed_store(store_keyed)
