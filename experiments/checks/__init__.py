"""The pieces of the complete check of a design (experiments/running/preflight.py puts them
together): models and their layers, key variables, and probes of served models. Each appends what
it finds to a Collector, so that one check tells every problem at once."""

# What other packages of the lab use; the rest is internal to this package
# (tests/test_house_rules.py holds the list to the imports).
__all__ = ["models", "power", "probes", "reach"]
