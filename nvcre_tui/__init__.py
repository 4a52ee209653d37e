"""nvcre console: certify Kubernetes GPU clusters for distributed AI work.

Import hygiene: this package and nvcre_tui.engine never import Textual; only app.py,
screens/ and widgets/ do.
"""

__version__ = "0.1.0"
