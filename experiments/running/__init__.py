"""Running a design: the checks before a run, the runner that makes the profiles and drives the
engine, and the pilot that measures a design on a few cells first."""
