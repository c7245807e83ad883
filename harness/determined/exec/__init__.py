"""Programs the master runs in task containers before the task itself."""
