"""The model pass: an OpenAI-compatible gateway client, failback chains with shared
circuit breakers, prompt-boundary hygiene, and the judges that apply a model's reply
to what the detectors found (DESIGN principles 1, 2, 4 and 6)."""
