"""Judges checked against people: a blinded, stratified sample of a run's texts (sample.py),
rating sheets for people (sheets.py, the CSV, Label Studio's files), the raters' answers read
back with every mistake refused (imports.py) and stored in the run's store (rows.py), and the
agreement between raters and between each judge and the raters (agreement.py), written into
the report (section.py)."""
