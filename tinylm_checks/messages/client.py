"""The learner's side of a check run by the check service (``tinylm_checks.client``): what a learner reads when the
service cannot be reached."""

MESSAGES = {
    "client.no_service": ("no check service answers at {path}, so this check cannot run here (this environment holds "
                          "no answers to compare with). In a class, tell your instructor; on your own machine, start "
                          "it with `make check-service RELEASED=NN` in the course's folder (NN: the latest stage you "
                          "work on), then run this cell again"),
    "client.broke_off": ("the check service at {path} broke off ({error}): your code was not judged. Run the cell "
                         "again; if it happens again, tell your instructor"),
    "client.timed_out": ("{check} ran past the check service's {seconds} s limit and was stopped: your code was not "
                         "judged. Time your code yourself (for the capstone: its tests, train.py and generate.py in "
                         "tiny-transformer/), make it faster, then run the cell again"),
    "client.busy": ("the check service at {path} is running as many checks as it may (yours included, if you "
                    "started several at once): run the cell again in a moment"),
    "client.not_private": ("{folder} is not your private folder ({problem}): someone else may have made it to receive "
                           "your checks, so nothing was sent. Tell your instructor; on your own machine, remove it, "
                           "or start the service and JupyterLab with TMPDIR set to a folder of yours"),
    "client.problem.link": "a symbolic link",
    "client.problem.not_folder": "not a folder",
    "client.problem.owner": "its owner is user {uid}, its mode {mode}",
    "client.not_the_service": ("the socket {path} belongs to user {uid}, not to the check service's user ({owner}): "
                               "nothing was sent to it. Tell your instructor"),
    "client.no_unix_sockets": ("this system has no Unix sockets, so the check service cannot be reached at {path}: "
                               "set ${env} to the address your instructor gives (tcp://HOST:PORT)"),
    "client.no_credential": ("the check service at {path} asks for your credential, and ${env} holds none it accepts: "
                             "tell your instructor (the hub sets it when your server starts)"),
    "client.refused": "the check service at {path} answers another user only: start your own (make check-service)",
    "client.too_large": ("your code's answer is {size} bytes, more than the check service reads ({limit}): the "
                         "course's checks never need so much"),
}
