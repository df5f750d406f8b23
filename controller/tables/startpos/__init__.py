"""The starting-position table: games where a number from 1 to N decides where the deal starts
and the table keeps no rules engine of ours (docs/startpos-table.md)."""
