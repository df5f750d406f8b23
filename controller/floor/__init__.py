"""The table as a floor device: meters and coded significant events, both derived from the
journal's rows (docs/meters.md, docs/events.md), and the install log's release identity.

Nothing here writes the journal or touches the loop: a meter is a count over rows, an event is a
row read in the catalogue's terms, so the journal stays the one record and a stopped table's
state directory gives the same answers as the running table."""
