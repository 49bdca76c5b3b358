"""Single-system benchmark runners; each is run as its own process by bench_evaluate.py."""
