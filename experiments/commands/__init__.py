"""Subcommands of `diarylab`, one module per area, each with register(subparsers)."""
