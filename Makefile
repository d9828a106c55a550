# Two commands do everything on a fresh clone:
#   make lab    set up .venv, write the learner notebooks into release/, open JupyterLab on them
#   make test   set up .venv, then run the whole test suite (what CI runs)
# and one while working: make test-fast (unit tests, reference vs PyTorch, checks vs mutants, lint, import graph).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# nbgrader calls `alembic` by name: the venv's bin/ must be on PATH.
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
STAGES := $(notdir $(wildcard notebooks/[0-9][0-9]_*))
PYTEST_ARGS ?=
# The slow tier mostly waits on kernels and nbgrader: more workers than cores keep both cores busy.
WORKERS ?= 4

.PHONY: venv notebooks release lab test test-fast claims-perturbed clean-release learner-env check-service check-service-stop class

$(VENV)/.installed: pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet pip==26.3  # pinned like everything else
	@# pip compiles every installed module on one core (about 70 s for torch and Jupyter): install without,
	@# then compile on every core. torch's one Python 3.12 file cannot compile here (pip skips it too).
	@# pyproject.toml states ranges; constraints.txt holds the versions we test with.
	$(PY) -m pip install --quiet --no-compile -c constraints.txt -e '.[lab,grading,test]'
	$(PY) -m compileall -q -j 0 -x 'torch/testing/_internal/py312_intrinsics' $(VENV)/lib
	@# jactionlint's wheel leaves its binary not executable and sets the mode on its first run: run it once now,
	@# so the tests' first call does not change the venv under the grading-tamper fingerprint (CI: test_tamper).
	$(VENV)/bin/jactionlint --version > /dev/null
	@# Learners' JupyterLab: hide nbgrader's instructor panels (instructors use the shell) and the
	@# "get Jupyter news?" pop-up. Both settings live inside .venv.
	$(VENV)/bin/jupyter labextension disable --level=sys_prefix \
	  @jupyter/nbgrader:create-assignment @jupyter/nbgrader:course-list > /dev/null 2>&1
	mkdir -p $(VENV)/share/jupyter/lab/settings
	echo '{"@jupyterlab/apputils-extension:notification": {"fetchNews": "false"}}' \
	  > $(VENV)/share/jupyter/lab/settings/overrides.json
	touch $@

venv: $(VENV)/.installed

# Rebuild notebooks/*/*.ipynb from the jupytext sources in course/ (maintainers, after editing a source), and the
# learner notebooks the package ships (tinylm_solutions/learner_notebooks/, both languages).
notebooks: venv
	$(PY) tools/build_notebooks.py

# The learner version of every stage, in the learner's language: TINYLM_LANG=zh or en, else the locale (LANG=zh_CN.UTF-8
# is Chinese), else English. It is the package's (tinylm-course release: the notebooks `make notebooks` builds, as
# nbgrader generate_assignment makes them; both languages have the same cells, grade ids and points: one gradebook
# grades both). An existing release/<stage> is kept: it holds the learner's work.
release: venv
	@$(PY) -m tinylm_solutions.course release release

# JupyterLab on release/ (tinylm-course lab): its own menus in the notebooks' language too, with the settings it writes
# in release/.jupyter-lab/<lang>/; as root it says --allow-root (Jupyter refuses to run as root unless told, and
# containers often are root).
lab: venv
	@$(PY) -m tinylm_solutions.course lab release

test: venv
	$(PY) -m pytest -n $(WORKERS) --dist loadscope --no-loadscope-reorder $(PYTEST_ARGS)
	@# A report, not a test: the ten slowest checks' first and warm calls (goals: 0.3 s and 0.05 s).
	$(PY) benchmarks/bench_checks.py --slowest 10

test-fast: venv
	$(PY) -m pytest -n 2 -m "not slow" tests $(PYTEST_ARGS)

# The claims (tests/test_claims*.py) under each stand-in for another machine of the same kind (TINYLM_PERTURB,
# tests/perturb/sitecustomize.py), one run each (about 9 minutes on 2 cores): every claim must hold under all of them.
PERTURBATIONS ?= threads1 threads2 threads4 mkldnn_off medium high
claims-perturbed: venv
	@failed=; for p in $(PERTURBATIONS); do echo "== TINYLM_PERTURB=$$p"; \
	  TINYLM_PERTURB=$$p $(PY) -m pytest -n 2 -p no:cacheprovider tests/test_claims*.py $(PYTEST_ARGS) \
	  || failed="$$failed $$p"; done; test -z "$$failed" || { echo "claims failed under:$$failed"; exit 1; }

clean-release:
	rm -rf release gradebook.db

# Class mode. A learner's environment without answers: the course's pinned dependencies, the checks' learner side and
# only the given code of the stages released so far (RELEASED: the latest one, its name or number, needed; rebuild with
# a later one as the class goes on). Its checks are requests to the check service (tinylm_grading.checkservice). It is
# for other users, the learners: outside this folder (which must be closed to them), readable by everyone.
LEARNER_VENV ?= /opt/tinylm-learner
RELEASED ?=
learner-env: venv
	$(PY) -m tinylm_grading.learnerenv --venv $(LEARNER_VENV) $(if $(RELEASED),--released $(RELEASED))

# The check service, in the background: it holds the reference and runs the checks of the stages up to RELEASED
# (needed). Without TINYLM_CHECK_SERVICE it listens in your private folder (<tmp>/tinylm-<uid>/) and answers you only.
CHECK_SERVICE_PID := .check-service.pid
check-service: venv
	@if [ -f $(CHECK_SERVICE_PID) ] && kill -0 $$(cat $(CHECK_SERVICE_PID)) 2>/dev/null; then \
	  echo "the check service is running (pid $$(cat $(CHECK_SERVICE_PID))); stop it with: make check-service-stop"; \
	else \
	  nohup $(PY) -m tinylm_grading.checkservice $(if $(RELEASED),--released $(RELEASED)) > .check-service.log 2>&1 & \
	  pid=$$!; for i in $$(seq 240); do grep -q "$$pid" .check-service.log && break; \
	    kill -0 $$pid 2>/dev/null || break; sleep 0.5; done; \
	  cat .check-service.log; \
	  if kill -0 $$pid 2>/dev/null; then echo $$pid > $(CHECK_SERVICE_PID); echo "stop it with: make check-service-stop"; \
	  else exit 2; fi; fi

check-service-stop:
	@if [ -f $(CHECK_SERVICE_PID) ]; then kill $$(cat $(CHECK_SERVICE_PID)) 2>/dev/null; rm -f $(CHECK_SERVICE_PID); \
	  echo "the check service is stopped"; else echo "no check service was started here"; fi

# A demo class on JupyterHub at 127.0.0.1:8000: an instructor (you) and three learners as Unix users, passwords
# printed, the learners in an environment without answers, the check service beside the hub (needs root and npm).
CLASS_ROOT ?= /srv/tinylm-class
RELEASED_CLASS ?= 01_attention
class: venv
	$(PY) -m tinylm_grading.hubclass --root $(CLASS_ROOT) --released $(RELEASED_CLASS)
