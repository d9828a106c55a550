# The instructor's image for a class on Zero to JupyterHub (docs/kubernetes.md): the whole course, for the check
# service (deploy/check-service.yaml's Deployment: `tinylm-check-service --socket tcp://0.0.0.0:7878 --released NN
# --secret FILE`), for grading (the instructor's server: nbgrader, formgrader, the sandboxed autograder; and
# deploy/grade-job.yaml's pods: `tinylm-autograde STAGE --shards N`), with the course's pinned versions. Never given
# to learners. Each use names its command (python3's, the base image's, is no use here); the class's course folder,
# with its submissions and gradebook, is the volume mounted at /srv/course (docs/kubernetes.md), never the image:
# .dockerignore leaves out what git does, so a folder that has graded a class builds a clean image too.
#   docker build -f deploy/service.Dockerfile -t tinylm-course .
FROM python:3.11-slim-bookworm
RUN useradd --create-home --uid 1000 jovyan
WORKDIR /course
COPY . .
RUN pip install --no-cache-dir -c constraints.txt -e '.[lab,grading,test]' && chown -R jovyan /course
USER jovyan
EXPOSE 7878
