"""Wrong implementations of stage 07's exercises (the Transformer block). (Skeleton: being written.)"""

# --------------------------------------------------------------------------- what the tests feed the checks
ROWS = []
REFERENCE = {}
LATE_FAILURE = {}
STUB = {}
