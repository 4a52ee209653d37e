"""The certification archive: a local SQLite history that outlives the cluster objects.

`Archiver` copies every Certification that reaches a terminal state (its report, per-node results with
measurements and evidence, each node's software baseline) into `history.db`; `HistoryQuery` reads it back
(node results across certifications, bandwidth trends, repeat offenders, staleness); `nvsentinel` reads
NVSentinel's view of a node beside ours. Nothing here writes a cluster object.

May import api, report, views (the console read model it archives from), store, controllers.conditions,
outfiles (whether the default place can be written), parsers.measurements (metric names), grants (the role a refused
delete takes) and the leaves.
"""

from nvcre_tui.engine.history.archive import Archiver, attach_archiver
from nvcre_tui.engine.history.db import default_history_path, open_history
from nvcre_tui.engine.history.queries import HistoryQuery

__all__ = ["Archiver", "HistoryQuery", "attach_archiver", "default_history_path", "open_history"]
