"""What the controller's loop keeps besides the table: the faults it holds (journal, program,
settings, devices) and the console replies that wait for the events they caused."""
