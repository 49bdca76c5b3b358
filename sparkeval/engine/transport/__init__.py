"""Moving rows and results between Spark and the workers (Arrow payloads and files)."""
