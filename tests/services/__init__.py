"""Real services for tests (Mosquitto, PostgreSQL, SoftHSM2, Chromium): see fixtures.py."""
