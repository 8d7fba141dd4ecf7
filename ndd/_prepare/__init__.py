"""The compiled prepare phase: metadata of results, invocations and the operator call path."""
