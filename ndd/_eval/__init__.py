"""Evaluation: modes, contexts, devices, streams, thread pools and the async executor."""
