"""Typed readers of decoded JSON and other loosely typed records: a leaf every part may use."""
