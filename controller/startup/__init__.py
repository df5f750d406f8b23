"""The checks a start runs before the table is ready: the journal's trust, the install log, the
clock, the settings replayed, the program's files and the RNG's start-up health test."""
