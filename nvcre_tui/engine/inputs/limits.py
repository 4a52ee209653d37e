"""How much input nvcre reads at most: a file past these limits is refused before it is parsed.

YAML is parsed by PyYAML's pure-Python loader (a few seconds per MiB), so its cap keeps the worst
case to seconds; the state file is JSON read by the C parser and may hold many certifications.
"""

MIB = 2**20

MAX_YAML_BYTES = 2 * MIB  # certifications, scenarios, nodes files, catalog files
MAX_STATE_BYTES = 64 * MIB  # the simulator's JSON state file
MAX_KUBECONFIG_BYTES = 4 * MIB  # hundreds of clusters with their certificates embedded stay under 1 MiB
MAX_CREDENTIAL_FILE_BYTES = MIB  # a kubeconfig's tokenFile, certificate or key: a few KiB, a CA bundle some hundred
MAX_DEPTH = 64  # nesting of mappings and lists; real manifests stay under 20
MAX_LOG_LINE_CHARS = MIB  # `nvcre parse`: a longer "line" is not a tool's text output (e.g. /dev/zero)
MAX_WHOLE_OUTPUT_BYTES = 64 * MIB  # `nvcre parse dcgm` reads its input whole: one run's output is far less
TEXT_PROBE_CHARS = 8192  # `nvcre parse`: a NUL byte this early is binary data, never a tool's text output (git's rule)
