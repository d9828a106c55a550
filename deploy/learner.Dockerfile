# The learners' image for a class on Zero to JupyterHub (docs/kubernetes.md): the course's pinned libraries, the
# checks' learner side and the given code of the stages released so far, no answer of a later stage
# (tinylm_grading.learnerenv, the same build as `make learner-env`). From the course folder:
#   docker build -f deploy/learner.Dockerfile --build-arg RELEASED=03 -t tinylm-learner:03 .
# Only the venv leaves the build stage: the reference the build reads never reaches the image.
FROM python:3.11-slim-bookworm AS build
WORKDIR /course
COPY pyproject.toml constraints.txt ./
COPY assets/tang_poems_zh.txt assets/
COPY tinylm_solutions tinylm_solutions
COPY tinylm_checks tinylm_checks
COPY tinylm_grading tinylm_grading
ARG RELEASED=00_setup
RUN python -m tinylm_grading.learnerenv --venv /opt/tinylm --released "$RELEASED" --extra jupyterhub==6.1.1

FROM python:3.11-slim-bookworm
RUN useradd --create-home --uid 1000 jovyan
COPY --from=build /opt/tinylm /opt/tinylm
ENV PATH=/opt/tinylm/bin:$PATH
USER jovyan
WORKDIR /home/jovyan
CMD ["jupyterhub-singleuser"]
