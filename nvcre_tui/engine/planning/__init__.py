"""The plan of a certification on given nodes, before anything runs: the catalog, option resolution, node
discovery, platform and GPU detection, grouping and partitioning, and rendering a category into its
Workflow (what `certification render` and the compose preview show, and what the engine creates).

May import api, judging (the default node-health expression, threshold checks), diagnose (partition asks it
for the first wave; diagnose itself imports only planning.grouping's Group), inputs, nvcre_tui.paths (where
the shipped catalog lives) and the leaf modules; never controllers, runners, store or report.
"""
