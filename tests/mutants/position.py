"""Wrong implementations of stage 04's exercises (positions). (Skeleton: being written.)"""

# --------------------------------------------------------------------------- what the tests feed the checks
ROWS = []
REFERENCE = {}
LATE_FAILURE = {}
STUB = {}
