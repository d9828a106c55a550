"""deploy/: what can be tested of a Kubernetes class without a cluster (docs/kubernetes.md).

- The learner image's last stage takes nothing but the built venv from its build stage.
- Its build step needs nothing but the files the Dockerfile copies and Python's standard library: run here that way,
  it writes the learner environment's files (no answer of a later stage: tests/test_learnerenv.py checks those).
- The values and manifests parse; the learners reach the check service by its Service's name and port; only the
  instructors' profile list has the course image.
"""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

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


def test_only_instructors_get_the_course_image():
    values = yaml.safe_load((DEPLOY / "z2jh-values.yaml").read_text())
    namespace = {"c": SimpleNamespace(KubeSpawner=SimpleNamespace())}
    exec(values["hub"]["extraConfig"]["tinylm-profiles"], namespace)
    profiles = namespace["c"].KubeSpawner.profile_list

    def images(user: str) -> list[str]:
        spawner = SimpleNamespace(user=SimpleNamespace(name=user))
        return [p.get("kubespawner_override", {}).get("image", "learner") for p in profiles(spawner)]

    assert images("learner7") == ["learner"]
    assert images("instructor") == ["learner", "registry.example.org/tinylm-course:latest"]
    assert "tinylm-course" not in values["singleuser"]["image"]["name"]
