# The instructor's image for a class on Zero to JupyterHub (docs/kubernetes.md): the whole course, for the check
# service (deploy/check-service.yaml's Deployment: `tinylm-check-service --socket tcp://0.0.0.0:7878 --released NN
# --secret FILE`), for grading (the instructor's server: nbgrader, formgrader, the sandboxed autograder; and
# deploy/grade-job.yaml's pods: `tinylm-autograde STAGE --shards N`), with the course's pinned versions. Never given
# to learners. It has no default command: the service needs the released stage and the class's secret.
#   docker build -f deploy/service.Dockerfile -t tinylm-course .
FROM python:3.11-slim-bookworm
RUN useradd --create-home --uid 1000 jovyan
WORKDIR /course
COPY . .
RUN pip install --no-cache-dir -c constraints.txt -e '.[lab,grading,test]' && chown -R jovyan /course
USER jovyan
EXPOSE 7878
