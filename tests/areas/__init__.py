"""tests/areas: one module per area of behaviour (README.md); run_tests.py
imports each, in name order, after testlib.setup()."""
