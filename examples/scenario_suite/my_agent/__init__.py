"""A small tool-using agent, the kind of code the harness tests."""
