"""From a run's output to a verdict: CEL (thresholds over measurements, node health over Nodes), the one
call into the parsers (measure), which node the output blames (blame) and the per-node result ConfigMaps
NVSentinel reads (results), and a diagnosis's fabric-wide fault said against the threshold (fabric_fault). Never a
pass without a measurement.

May import api, parsers and the leaf modules; nothing that plans, stores or runs.
"""
