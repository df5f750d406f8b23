"""The host feed: the journal to the casino's MQTT broker, and the collector that verifies it."""
