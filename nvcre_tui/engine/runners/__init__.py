"""How a WorkloadRun is executed: the simulated fleet here, Kubernetes (Kubeflow TrainJob / pods) later."""
