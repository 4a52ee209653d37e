"""Reading certifications back: the one read model (readmodel: each Certification joined once to its
Workflows and Jobs) and every report built from it (model: the JSON report; text, junit, html); logtail: what of a
run's log is new while following it, and the tail a failed Job kept; wall_subjects: which certifications the wall
shows (running, the latest finished, every failure nothing newer replaced).

May import api, judging, parsers, diagnose (its readable summary), controllers.conditions, controllers.iterations
(a finished iteration's groups with their nodes) and the leaf modules; never store, runners or the console. The
console's views (engine/views/) read the same model.
"""
