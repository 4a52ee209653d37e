"""What the console shows, computed from a snapshot of the store: pure functions, no Textual.

Screens render these; they never read Kubernetes or the store themselves. snapshot: the Snapshot they read (and the
informer's node-state models); join: the informer's join kept across snapshots (CachedJoin); waiting: what a
certification, category or run waits for; certifications: the dashboard's rows; nodes: node states, the nodes a
certification holds or targets, a node's history; suspicion: the fleet's counts and a diagnosis's narrowing set;
failures: the failures pane's rows; diagnosis: a category's verdicts and the infrastructure faults it named.

May import api, report (the read model every view is built on), judging, diagnose, controllers.conditions,
controllers.certification, controllers.iterations, controllers.job (the words and bounds of a held category and of
a Job waiting for its pods), kube.held (what holds a deletion), parsers.measurements, planning.discovery (a target
over the Nodes), the store's cache, cache views and kinds, and the leaf modules; never Textual, runners, sim, the
engine loop or the CLI.
"""
