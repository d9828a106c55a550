"""The learner's side of a check run by the check service (``tinylm_checks.client``): what a learner reads when the
service cannot be reached."""

MESSAGES = {
    "client.no_service": ("no check service answers at {path}, so this check cannot run here (this environment holds "
                          "no answers to compare with). In a class, tell your instructor; on your own machine, start "
                          "it with `make check-service` in the course's folder, then run this cell again"),
    "client.broke_off": ("the check service at {path} broke off ({error}): your code was not judged. Run the cell "
                         "again; if it happens again, tell your instructor"),
    "client.busy": ("the check service at {path} is running as many checks as it may (yours included, if you "
                    "started several at once): run the cell again in a moment"),
}
