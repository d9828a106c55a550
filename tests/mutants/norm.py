"""Wrong implementations of stage 06's exercises (LayerNorm). (Skeleton: being written.)"""

# --------------------------------------------------------------------------- what the tests feed the checks
ROWS = []
REFERENCE = {}
LATE_FAILURE = {}
STUB = {}
