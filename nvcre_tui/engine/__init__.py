"""The engine: no Textual here (tests/test_import_graph.py checks). Its layers, lowest first:

- api/        the wire: resource models, CRDs, schemas, the vocabulary of keys;
- inputs/     bounded, strict loading of every YAML and JSON input;
- parsers/    real tool output (nccl-tests, dcgmi, Megatron/NeMo) -> measurements and failures;
- planning/   catalog, discovery, grouping, partitioning, rendering a certification on nodes;
- judging/    thresholds, node health, measurement, blame;
- diagnose/   adaptive fault isolation, a pure state machine;
- workloads/  the Kubernetes manifests a WorkloadRun becomes (TrainJob, batch Job);
- store/      the ResourceStore contract and its memory, SQLite and Kubernetes implementations, the watch cache;
- controllers/ the reconcilers (Certification, Workflow, Job, WorkloadRun);
- runners/    execute WorkloadRuns: the simulated fleet's or the Kubernetes one;
- sim/        the simulated GPU fleet and the output it prints;
- report/     the read model and the reports;
- history/    the local archive of finished certifications;
- kube/       kubeconfig, setup, RBAC, the Kubernetes session.

At the top level: the engine loop (engine, workqueue), sessions (session, sim_state, state_file), leases,
the headless controller, metrics, the console's views and informer, and leaf helpers (clock, errors,
units, printable, outfiles, grants: which role grants what RBAC refused).
"""
