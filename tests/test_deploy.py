"""deploy/: what can be tested of a Kubernetes class without a cluster (docs/kubernetes.md).

- The learner image's last stage takes nothing but the built venv from its build stage.
- Its build step needs nothing but the files the Dockerfile copies and Python's standard library: run here that way,
  it writes the learner environment's files (no answer of a later stage: tests/test_learnerenv.py checks those).
- The values and manifests parse; the learners reach the check service by its Service's name and port; only the
  instructors' profile list has the course image.
- Every manifest is valid for Kubernetes' own schemas (kubernetes-validate, strict: an unknown field fails), at the
  oldest and newest versions it knows; and uses the names, ports and labels deploy/names.yaml defines once (a
  Service's selector that misses its pods, a port moved in one place only, a Job whose --shards is not its number of
  pods: each is a mutant here that the comparison names).
"""
import copy
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from tinylm_grading import learnerenv

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"


def stages(dockerfile: Path) -> list[list[str]]:
    """The Dockerfile's instructions (continuation lines joined), split at each FROM."""
    text = re.sub(r"\\\n", " ", dockerfile.read_text())
    found = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.upper().startswith("FROM "):
            found.append([])
        found[-1].append(line)
    return found


def test_the_learner_image_takes_only_the_venv_from_its_build():
    build, final = stages(DEPLOY / "learner.Dockerfile")
    assert build[0].endswith(" AS build")
    copies = [line for line in final if line.upper().startswith(("COPY", "ADD"))]
    assert copies == ["COPY --from=build /opt/tinylm /opt/tinylm"]
    run = next(line for line in build if line.startswith("RUN "))
    assert "python -m tinylm_grading.learnerenv --venv /opt/tinylm" in run
    assert not any(line.upper().startswith("FROM") and "AS build" not in line for line in final[1:])


def test_the_learner_image_s_build_step_needs_only_what_it_copies(tmp_path):
    build = stages(DEPLOY / "learner.Dockerfile")[0]
    context = tmp_path / "course"
    for line in build:
        if line.startswith("COPY "):
            source, target = line.split()[1:3]
            destination = context / target
            if (ROOT / source).is_dir():
                shutil.copytree(ROOT / source, destination, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                (destination if target.endswith("/") else destination.parent).mkdir(parents=True, exist_ok=True)
                shutil.copy(ROOT / source, destination / Path(source).name if target.endswith("/") else destination)
    released = re.search(r"ARG RELEASED=(\S+)", "\n".join(build)).group(1)
    site = tmp_path / "site"
    site.mkdir()
    # -S -I: no site-packages, no environment: the standard library and the copied files only (as in python:3.11-slim)
    out = subprocess.run([sys.executable, "-S", "-I", "-c",
                          f"import sys; sys.path.insert(0, {str(context)!r}); from tinylm_grading import learnerenv; "
                          f"sys.exit(learnerenv.main(['--site', {str(site)!r}, '--released', {released!r}]))"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    written = sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file())
    expected = tmp_path / "expected"
    expected.mkdir()
    assert written == sorted(learnerenv.write(expected, released))  # the same files as make learner-env
    assert json.loads((site / "tinylm_checks/learner.json").read_text())["released"] == released


def test_the_values_and_the_manifests_agree():
    values = yaml.safe_load((DEPLOY / "z2jh-values.yaml").read_text())
    manifests = {doc["kind"]: doc for doc in yaml.safe_load_all((DEPLOY / "check-service.yaml").read_text())}
    service = manifests["Service"]
    address = values["singleuser"]["extraEnv"]["TINYLM_CHECK_SERVICE"]
    assert address == f"tcp://{service['metadata']['name']}:{service['spec']['ports'][0]['port']}"
    container = manifests["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][:3] == ["tinylm-check-service", "--socket",
                                        f"tcp://0.0.0.0:{service['spec']['ports'][0]['targetPort']}"]
    assert manifests["NetworkPolicy"]["spec"]["ingress"][0]["ports"] == [{"port": 7878}]


HOME = {"name": "home", "persistentVolumeClaim": {"claimName": "claim-instructor"}}


def profiles(values: dict, user: str, volumes=(HOME,)) -> list[dict]:
    """The hub's profile list for ``user`` (the values' Python run as the hub runs it), on a spawner whose volumes,
    mounts and environment are z2jh's (``volumes``: a list, or a dict by name as newer KubeSpawners keep them)."""
    namespace = {"c": SimpleNamespace(KubeSpawner=SimpleNamespace())}
    exec(values["hub"]["extraConfig"]["tinylm-profiles"], namespace)
    mounts = {"home": {"name": "home", "mountPath": "/home/jovyan"}}
    spawner = SimpleNamespace(user=SimpleNamespace(name=user), volumes=copy.deepcopy(volumes),
                              volume_mounts=mounts if isinstance(volumes, dict) else list(mounts.values()),
                              environment={"TINYLM_CHECK_SERVICE": "tcp://tinylm-checks:7878"})
    return namespace["c"].KubeSpawner.profile_list(spawner)


def test_only_instructors_get_the_course_image():
    values = yaml.safe_load((DEPLOY / "z2jh-values.yaml").read_text())

    def images(user: str) -> list[str]:
        return [p.get("kubespawner_override", {}).get("image", "learner") for p in profiles(values, user)]

    assert images("learner7") == ["learner"]
    assert images("instructor") == ["registry.example.org/tinylm-course:latest"]  # only: KubeSpawner keeps overrides
    assert "tinylm-course" not in values["singleuser"]["image"]["name"]


@pytest.mark.parametrize("volumes", [(HOME,), {"home": HOME}], ids=["list", "dict"])
def test_the_instructor_s_server_keeps_its_home_and_adds_the_course(volumes):
    """The profile adds the course's volume to the server's own (its home, the exchange), whichever way KubeSpawner
    keeps them, and its gradebook to the environment the hub gives every server."""
    override = profiles(_values(), "instructor", volumes)[0]["kubespawner_override"]
    course = {"name": "course", "persistentVolumeClaim": {"claimName": "tinylm-course"}}
    assert override["volumes"] == ({"home": HOME, "course": course} if isinstance(volumes, dict) else [HOME, course])
    # a second start: KubeSpawner reuses the spawner, whose volumes hold the course already
    again = profiles(_values(), "instructor", override["volumes"])[0]["kubespawner_override"]
    assert again["volumes"] == override["volumes"]
    assert override["environment"]["TINYLM_CHECK_SERVICE"] == "tcp://tinylm-checks:7878"


MANIFESTS = sorted(DEPLOY.glob("*.yaml"))
NOT_MANIFESTS = ("names.yaml", "z2jh-values.yaml")  # the names themselves; helm's values, not a Kubernetes object


def manifests() -> dict[str, dict]:
    """Every Kubernetes object of deploy/, by "kind/name"."""
    found = {}
    for path in MANIFESTS:
        if path.name not in NOT_MANIFESTS:
            for doc in yaml.safe_load_all(path.read_text()):
                found[f"{doc['kind']}/{doc['metadata']['name']}"] = doc
    return found


@pytest.mark.parametrize("version", ["1.33", "latest"])  # the sandbox's pod settings are on by default from 1.33
def test_every_manifest_is_valid_kubernetes(version):
    import kubernetes_validate
    version = kubernetes_validate.latest_version() if version == "latest" else version
    found = manifests()
    assert set(found) == {"Deployment/tinylm-checks", "Service/tinylm-checks", "NetworkPolicy/tinylm-checks",
                          "Job/tinylm-grade", "NetworkPolicy/tinylm-gradebook"}
    for doc in found.values():
        kubernetes_validate.validate(doc, version, strict=True)
    wrong = copy.deepcopy(found["Job/tinylm-grade"])
    wrong["spec"]["completionsMode"] = wrong["spec"].pop("completionMode")  # a field's name misspelt
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(wrong, version, strict=True)


def disagreements(found: dict[str, dict], values: dict, names: dict) -> list[str]:
    """Where the manifests and the values differ from deploy/names.yaml: one line each (empty: they agree)."""
    out = []

    def same(what: str, got, want) -> None:
        if got != want:
            out.append(f"{what}: {got!r}, not {want!r}")

    checks, grading = names["check_service"], names["grading"]
    deployment = found.get(f"Deployment/{checks['name']}", {})
    service = found.get(f"Service/{checks['name']}", {})
    policy = found.get(f"NetworkPolicy/{checks['name']}", {})
    pod = deployment.get("spec", {}).get("template", {})
    container = pod.get("spec", {}).get("containers", [{}])[0]
    same("the Deployment's selector", deployment.get("spec", {}).get("selector"), {"matchLabels": checks["labels"]})
    same("the Deployment's pods' labels", pod.get("metadata", {}).get("labels"), checks["labels"])
    same("the Service's selector", service.get("spec", {}).get("selector"), checks["labels"])
    same("the Service's ports", service.get("spec", {}).get("ports"),
         [{"port": checks["port"], "targetPort": checks["port"]}])
    same("the pods' ports", container.get("ports"), [{"containerPort": checks["port"]}])
    same("the service's listening address", container.get("command", [None] * 3)[1:3],
         ["--socket", f"tcp://0.0.0.0:{checks['port']}"])
    same("the pods' secret", [v.get("secret", {}).get("secretName") for v in pod.get("spec", {}).get("volumes", [])],
         [checks["secret"]])
    same("the NetworkPolicy's pods", policy.get("spec", {}).get("podSelector"), {"matchLabels": checks["labels"]})
    same("the NetworkPolicy's ingress", policy.get("spec", {}).get("ingress"),
         [{"from": [{"podSelector": {"matchLabels": names["learners"]["labels"]}}], "ports": [{"port": checks["port"]}]}])
    same("the learners' TINYLM_CHECK_SERVICE", values["singleuser"]["extraEnv"]["TINYLM_CHECK_SERVICE"],
         f"tcp://{checks['name']}:{checks['port']}")
    same("the hub's secret", [v.get("secret", {}).get("secretName") for v in values["hub"]["extraVolumes"]],
         [checks["secret"]])
    job = found.get(f"Job/{grading['name']}", {})
    template = job.get("spec", {}).get("template", {})
    grader = template.get("spec", {}).get("containers", [{}])[0]
    command = grader.get("command", [])
    same("the Job's labels", [job.get("metadata", {}).get("labels"), template.get("metadata", {}).get("labels")],
         [grading["labels"]] * 2)
    same("the Job's mode", job.get("spec", {}).get("completionMode"), "Indexed")
    shards = int(command[command.index("--shards") + 1]) if "--shards" in command else None
    same("the Job's --shards, completions and parallelism", [shards, job.get("spec", {}).get("completions"),
                                                             job.get("spec", {}).get("parallelism")], [shards] * 3)
    same("the Job's command", command[:1], ["tinylm-autograde"])
    course = {"name": "course", "persistentVolumeClaim": {"claimName": grading["course_claim"]}}
    mount = {"name": "course", "mountPath": grading["course_path"]}
    gradebook = {"valueFrom": {"secretKeyRef": {"name": grading["gradebook_secret"], "key": "url"}}}
    same("the Job's course folder", [grader.get("workingDir"), named(grader.get("volumeMounts"), "course")],
         [grading["course_path"], mount])
    same("the Job's volume", named(template.get("spec", {}).get("volumes"), "course"), course)
    same("the Job's gradebook", named(grader.get("env"), "TINYLM_GRADEBOOK"), {"name": "TINYLM_GRADEBOOK", **gradebook})
    sandbox = names["sandbox"]
    for what, spec, container in (("the Job's pods", template.get("spec", {}), grader),
                                  ("the check service's pods", pod.get("spec", {}), container)):
        same(f"{what}' sandbox", [spec.get("hostUsers"), container.get("securityContext")],
             [sandbox["hostUsers"], sandbox["securityContext"]])
    instructor = profiles(values, "instructor")[0]["kubespawner_override"]
    same("the instructor's course folder", [instructor["cmd"][-1], named(instructor["volume_mounts"], "course"),
                                            named(instructor["volumes"], "course")],
         [f"--ServerApp.root_dir={grading['course_path']}", mount, course])
    same("the instructor's gradebook", instructor["environment"].get("TINYLM_GRADEBOOK"), gradebook)
    instructors = names["instructors"]
    same("the instructor's labels", instructor.get("extra_labels"), instructors["labels"])
    reach = found.get(f"NetworkPolicy/{instructors['gradebook_policy']}", {}).get("spec", {})
    same("the gradebook's NetworkPolicy", [reach.get("podSelector"), reach.get("egress")],
         [{"matchLabels": instructors["labels"]},
          [{"ports": [{"port": instructors["gradebook_port"], "protocol": "TCP"}]}]])
    same("the learners' way to the check service", values["singleuser"].get("networkPolicy", {}).get("egress"),
         [{"to": [{"podSelector": {"matchLabels": checks["labels"]}}],
           "ports": [{"port": checks["port"], "protocol": "TCP"}]}])
    same("the instructor's sandbox", [instructor.get("extra_pod_config", {}).get("hostUsers"),
                                      instructor.get("container_security_context")],
         [sandbox["hostUsers"], sandbox["securityContext"]])
    return out


def named(items, name: str):
    """The item called ``name`` of a list of Kubernetes objects (volumes, mounts, variables), or None."""
    return next((item for item in items or () if item.get("name") == name), None)


def _names() -> dict:
    return yaml.safe_load((DEPLOY / "names.yaml").read_text())


def _values() -> dict:
    return yaml.safe_load((DEPLOY / "z2jh-values.yaml").read_text())


def test_every_manifest_uses_the_names_defined_once():
    assert disagreements(manifests(), _values(), _names()) == []


def _moved(found: dict, values: dict) -> None:
    """The issue's mutant: the Service's selector misspelt, the Service (and the learners' address) on another port."""
    service = found["Service/tinylm-checks"]["spec"]
    service["selector"] = {"app": "tinylm-check"}
    service["ports"] = [{"port": 7879, "targetPort": 7879}]
    values["singleuser"]["extraEnv"]["TINYLM_CHECK_SERVICE"] = "tcp://tinylm-checks:7879"


def _unsharded(found: dict, values: dict) -> None:
    found["Job/tinylm-grade"]["spec"]["completions"] = 8


def _elsewhere(found: dict, values: dict) -> None:
    """The Job mounts the course's volume over the image's code (where it was first), the instructor does not."""
    grader = found["Job/tinylm-grade"]["spec"]["template"]["spec"]["containers"][0]
    grader["workingDir"] = grader["volumeMounts"][0]["mountPath"] = "/course"


def _unreached(found: dict, values: dict) -> None:
    """The learners' egress to the service on the old port, the gradebook's policy on pods no profile labels."""
    values["singleuser"]["networkPolicy"]["egress"][0]["ports"][0]["port"] = 7879
    found["NetworkPolicy/tinylm-gradebook"]["spec"]["podSelector"] = {"matchLabels": {"tinylm-role": "teacher"}}


def _policy(found: dict, values: dict) -> None:
    found["NetworkPolicy/tinylm-checks"]["spec"]["ingress"][0]["ports"] = [{"port": 7879}]


@pytest.mark.parametrize("mutant, named", [
    (_moved, ["the Service's selector: {'app': 'tinylm-check'}, not {'app': 'tinylm-checks'}",
              "the Service's ports: [{'port': 7879, 'targetPort': 7879}], not [{'port': 7878, 'targetPort': 7878}]",
              "the learners' TINYLM_CHECK_SERVICE: 'tcp://tinylm-checks:7879', not 'tcp://tinylm-checks:7878'"]),
    (_unsharded, ["the Job's --shards, completions and parallelism: [4, 8, 4], not [4, 4, 4]"]),
    (_policy, ["the NetworkPolicy's ingress: [{'from': [{'podSelector': {'matchLabels': {'component': "
               "'singleuser-server'}}}], 'ports': [{'port': 7879}]}], not [{'from': [{'podSelector': {'matchLabels': "
               "{'component': 'singleuser-server'}}}], 'ports': [{'port': 7878}]}]"]),
    (_elsewhere, ["the Job's course folder: ['/course', {'name': 'course', 'mountPath': '/course'}], not "
                  "['/srv/course', {'name': 'course', 'mountPath': '/srv/course'}]"]),
    (_unreached, ["the gradebook's NetworkPolicy: [{'matchLabels': {'tinylm-role': 'teacher'}}, [{'ports': [{'port': "
                  "5432, 'protocol': 'TCP'}]}]], not [{'matchLabels': {'tinylm-role': 'instructor'}}, [{'ports': "
                  "[{'port': 5432, 'protocol': 'TCP'}]}]]",
                  "the learners' way to the check service: [{'to': [{'podSelector': {'matchLabels': {'app': "
                  "'tinylm-checks'}}}], 'ports': [{'port': 7879, 'protocol': 'TCP'}]}], not [{'to': [{'podSelector': "
                  "{'matchLabels': {'app': 'tinylm-checks'}}}], 'ports': [{'port': 7878, 'protocol': 'TCP'}]}]"]),
], ids=["selector-typo-and-port-moved", "shards-not-completions", "policy-port", "course-folder-elsewhere",
        "egress-unreached"])
def test_a_manifest_that_strays_from_the_names_is_named(mutant, named):
    found, values = manifests(), _values()
    mutant(found, values)
    assert disagreements(found, values, _names()) == named


def docker_form(pattern: str) -> str:
    """A .gitignore pattern as .dockerignore writes it: a name without a slash matches at any depth in git, only at the
    context's top in Docker unless it starts with ``**/``; a leading slash and a trailing one mean nothing there."""
    if pattern.startswith("/"):
        return pattern[1:].rstrip("/")
    return pattern.rstrip("/") if "/" in pattern.rstrip("/") else "**/" + pattern.rstrip("/")


def test_the_images_leave_out_what_git_leaves_out():
    """``docker build`` sends the whole folder: without a .dockerignore a course folder's submitted/, autograded/,
    feedback/ and gradebook.db (git-ignored, there after grading) went into the image the Job's pods pull."""
    ignored = set(line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
                  if line.strip() and not line.startswith("#"))
    wanted = {docker_form(line.strip()) for line in (ROOT / ".gitignore").read_text().splitlines()
              if line.strip() and not line.startswith("#")}
    assert wanted | {".git"} <= ignored, sorted(wanted | {".git"} - ignored)
    assert {"**/submitted", "**/autograded", "**/feedback", "**/gradebook.db", "**/.venv"} <= ignored
    assert docker_form("__pycache__/") == "**/__pycache__" and docker_form("/tinylm-course/") == "tinylm-course"
    assert docker_form("notebooks/12_report/report.md") == "notebooks/12_report/report.md"
