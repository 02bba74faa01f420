"""The pieces of the complete check of a design (experiments/running/preflight.py puts them
together): models and their layers, key variables, and probes of served models. Each appends what
it finds to a Collector, so that one check tells every problem at once."""
