"""Tests of the pieces nvcre needs on a real cluster: setup, RBAC, the engine Lease, metrics."""
