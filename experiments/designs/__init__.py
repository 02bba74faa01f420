"""The shipped designs (TOML) and the door that opens a design file, or a run folder's locked copy,
by its kind; the design reference is written from the kinds' schemas here."""
