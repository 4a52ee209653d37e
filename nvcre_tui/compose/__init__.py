"""The compose screen's model, free of Textual: `form` holds what the operator typed (a Draft) and turns
it into a Certification body; `review` checks a Draft with the engine (names, selector, options,
thresholds, the plan on today's nodes). The screen (screens/compose.py) and its widgets render these;
this package may import the engine, never Textual (tests/test_import_graph.py checks)."""
