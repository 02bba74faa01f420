"""The engine core every kind runs on: designs as typed schema, the contract a kind fulfils,
the store, the run folder and its lock, the manifest, progress, lanes and executors, and the
judging loop."""

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = [
    "chatbot_turns",
    "contract",
    "design",
    "executor",
    "executor_choice",
    "export",
    "inputs",
    "judging",
    "lanes",
    "manifest",
    "progress",
    "repeats",
    "reuse",
    "runfolder",
    "runlock",
    "store",
    "tasks",
    "workload",
    "writes",
    "writing_design",
]
