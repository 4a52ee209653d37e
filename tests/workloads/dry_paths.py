"""Where a server-side dry run sends each kind the Kubernetes runner creates (test_dry_run.py: a real kube-apiserver;
test_emulator_contract.py: the emulator)."""

from __future__ import annotations

NAMESPACE = "gpu-tests"
PATHS = {
    "ConfigMap": "/api/v1/namespaces/{ns}/configmaps", "Secret": "/api/v1/namespaces/{ns}/secrets",
    "Service": "/api/v1/namespaces/{ns}/services", "Job": "/apis/batch/v1/namespaces/{ns}/jobs",
    "TrainJob": "/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainjobs",
    "TrainingRuntime": "/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainingruntimes",
}
