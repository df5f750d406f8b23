"""The table kernel: what every game table composes instead of writing it again.

* :mod:`.unit_of_work` -- one input, one unit of work: the input journaled with its first row,
  one memo and one restore per journal transaction, outputs after the commit, undo on rollback,
  silence while recovery replays;
* :mod:`.press` -- a simulated dealer's press on the simulated GPIO, as the profile wires it
  (``active_low``, the bounce time);
* :mod:`.refusal` -- why a trigger is refused: a guard returns its reason once.

The counted summary rows live in :mod:`controller.journal.summary` (one helper for the journal
and every table).
"""
