"""The wire: what nvcre's objects and the Nodes it reads look like, and nothing that decides anything.

Owns the `nvcre.nvidia.com/v1alpha1` resource models (resources, base), the typed views that read raw
bodies (bodies), their CRDs, option and Node schemas, validation messages, the Node accessors and the
vocabulary of label, annotation and resource keys. May import only the engine's leaf modules (errors,
units, clock) and inputs; the one exception is options validating its thresholds through
judging.thresholds, imported lazily.
"""
