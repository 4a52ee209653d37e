"""The embedded GPU fleet that stands in for a cluster: scenarios (scenario.py: pools, faults, a seed), the
fleet's Nodes (fleet.py, the only code that writes Nodes: it plays the cluster), and the physics and tool output
of a simulated run (physics.py, outputs/: real nccl-tests, dcgmi and Megatron text for the parsers).

Deterministic for a seed. May import api, inputs, store and the leaves; nothing from the engine's controllers.
"""
