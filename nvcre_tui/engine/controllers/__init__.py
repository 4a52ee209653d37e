"""Level-triggered reconcilers: Certification -> Workflow -> Job -> WorkloadRun (the runner does the run).

Owns what each of our objects' status says and when: one reconcile function per kind, each reading the world
through the watch cache (context.World) and writing only through the store (context.Context), idempotent and
safe to repeat after a crash. Never writes a Node. May import api, planning, judging, diagnose, runners (the
Runner protocol), store and the leaf modules (clock, units, errors).
"""
