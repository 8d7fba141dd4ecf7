"""Placeholder replaced by the family implementation."""
OPERATORS = []
