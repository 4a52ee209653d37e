"""Certification manifests as the tests write them: YAML text for certification_from_text."""

from __future__ import annotations

ON_EVERY_GPU_NODE = """
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: t}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}}
  categories:
    - CATEGORY
"""


def on_every_gpu_node(category: str) -> str:
    """Certification t of every GPU node (the GPU Operator's gpu.present label) with one category, a YAML flow
    mapping such as `{domain: diagnostics, variant: dcgm-level4, options: OPTIONS}` (placeholders the test replaces)."""
    return ON_EVERY_GPU_NODE.replace("CATEGORY", category)
