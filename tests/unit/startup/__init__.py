"""Tests of the start-up checks (controller/startup/)."""
