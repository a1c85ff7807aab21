"""walkback: the command line. It wires the parts together and holds no logic of its own."""

__version__ = "0.1.0"
