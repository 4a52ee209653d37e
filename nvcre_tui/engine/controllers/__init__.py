"""Level-triggered reconcilers: Certification -> Workflow -> Job -> WorkloadRun (runner)."""
