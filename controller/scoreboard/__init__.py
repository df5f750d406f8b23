"""The table's monitor: read-only web pages of the published table state (docs/scoreboard.md).

``content`` turns a published view into what a page draws (the baccarat roads computed here with
``controller.games.baccarat.roads``), ``pages`` holds the two pages, ``server`` serves them and
streams every new version as a server-sent event. Nothing here can change the table.
"""
