# syntax=docker/dockerfile:1
# One image for the render producer, its consumers and kubeview itself (see docs/render-on-kubernetes.md).
#
#   docker build -t kubeview:latest .                          # CPU consumers
#   docker build -t kubeview:cuda --build-arg WITH_CUDA=1 .     # adds numba-cuda for `--gpu 1` consumers
#
# numba's cache is warmed here by a tiny render, for the generic x86-64 CPU (NUMBA_CPU_NAME=generic) so
# that it is valid on every node, not just on the build machine; a consumer then starts in about a
# second instead of compiling for several (much longer at a 100m cpu request). numba needs a writable
# cache directory even to load a cached kernel, so with a read-only root filesystem the pods copy
# /opt/numba-cache into an emptyDir and point NUMBA_CACHE_DIR at it (see kubeview/render/manifests.py).
FROM python:3.11-slim-bookworm

ARG WITH_CUDA=0
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore \
    NUMBA_CACHE_DIR=/opt/numba-cache \
    NUMBA_CPU_NAME=generic \
    HOME=/tmp

RUN groupadd --gid 10001 kubeview \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /tmp --shell /usr/sbin/nologin kubeview \
 && install -d -o 10001 -g 10001 /opt/numba-cache

WORKDIR /src
# Dependencies first (a layer that survives code changes), then the code.
COPY pyproject.toml README.md ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /tmp/requirements.txt \
 && pip install -r /tmp/requirements.txt \
 && if [ "$WITH_CUDA" = "1" ]; then pip install "numba-cuda[cu12]"; fi \
 && rm /tmp/requirements.txt
COPY kubeview ./kubeview
COPY renderer ./renderer
RUN pip install --no-deps . && rm -rf /src/build

WORKDIR /tmp
USER 10001:10001
# Warm the cache: the serial kernel through a real producer/consumer pair (what consumer pods run),
# the parallel one through a reference render.
RUN python -m renderer producer three-spheres --listen 127.0.0.1:7000 -o /tmp/warm.png & \
    python -m renderer consumer --connect 127.0.0.1:7000 && wait \
 && python -m renderer render three-spheres --no-progress -o /tmp/warm.png \
 && rm -f /tmp/warm.png \
 && test -n "$(ls -A /opt/numba-cache)"

EXPOSE 7000 7001
CMD ["kubeview", "--help"]
