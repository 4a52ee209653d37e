"""How a WorkloadRun is executed: on the simulated fleet (simulated.py) or on Kubernetes (kubernetes/: Kubeflow
TrainJobs, or batch/v1 Jobs without the Trainer CRDs, watched pods, logs read from the API server).

Owns the run's phase, measurements and blame as the runner observed them; judging turns output into verdicts.
May import api, planning, judging, parsers, workloads, sim, kube, store, controllers.conditions and the leaves.
"""
