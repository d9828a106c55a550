"""Wrong implementations of stage 05's exercises (the feed-forward network). (Skeleton: being written.)"""

# --------------------------------------------------------------------------- what the tests feed the checks
ROWS = []
REFERENCE = {}
LATE_FAILURE = {}
STUB = {}
