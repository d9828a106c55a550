"""pyproject.toml and environment.yml pin the same packages to the same versions."""
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def pyproject_pins() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    return dict(r.split("==") for r in reqs)


def conda_pins() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    return dict(r.split("==") for r in pip)


def test_every_requirement_is_pinned_exactly():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    assert all(r.count("==") == 1 for r in reqs), [r for r in reqs if "==" not in r]


def test_environment_yml_has_the_same_pins_as_pyproject():
    assert conda_pins() == pyproject_pins()


def test_torch_is_pinned_to_the_cpu_build_version():
    assert pyproject_pins()["torch"] == "2.13.0"


def test_python_versions_agree():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert "python=3.11" in env["dependencies"]
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"].startswith(">=3.11")
