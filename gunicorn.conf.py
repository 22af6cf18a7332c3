# Read by gunicorn from its working directory: the access log keeps credentials sent in
# a query string out (revreview.gunicorn_logging).
logger_class = "revreview.gunicorn_logging.RedactingLogger"
