"""Judges checked against people: a blinded, stratified sample of a run's texts (sample.py),
rating sheets for people (sheets.py, the CSV, Label Studio's files), the raters' answers read
back with every mistake refused (imports.py) and stored in the run's store (rows.py), and the
agreement between raters and between each judge and the raters (agreement.py), written into
the report (section.py)."""

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = [
    "contexts",
    "form",
    "imports",
    "label_studio",
    "lock",
    "report_lines",
    "rows",
    "sample",
    "sheets",
    "stored",
]
