"""Command modules, one per group. Heavy imports happen inside command bodies."""
