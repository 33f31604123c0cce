# syntax=docker/dockerfile:1.7
ARG CUDA_VERSION=12.4.1
ARG PYTHON_VERSION=3.12
FROM nvidia/cuda:${CUDA_VERSION}-devel-ubuntu22.04 AS base
ARG PYTHON_VERSION
ENV DEBIAN_FRONTEND=noninteractive \
    PIP_NO_CACHE_DIR=1 UV_LINK_MODE=copy
WORKDIR /workspace

RUN apt-get update -y \
    && apt-get install -y --no-install-recommends \
        git curl ca-certificates \
    # the deadsnakes PPA carries every supported Python
    && add-apt-repository -y ppa:deadsnakes/ppa \

    && apt-get install -y python${PYTHON_VERSION} python${PYTHON_VERSION}-venv \
    && rm -rf /var/lib/apt/lists/*

COPY requirements/common.txt requirements/cuda.txt requirements/
RUN --mount=type=cache,target=/cache/uv \
    --mount=type=bind,source=requirements/build.txt,target=/tmp/build.txt \
    uv pip install --system -r requirements/cuda.txt -r /tmp/build.txt

FROM base AS build
COPY . .
RUN ["python3", "setup.py", "bdist_wheel", "--dist-dir=dist"]
RUN ["/bin/bash", "-c", "pip install -e . && python -c 'import pkg'"]

FROM nvidia/cuda:${CUDA_VERSION}-base-ubuntu22.04 AS final
WORKDIR /opt/app
COPY --from=build /workspace/dist/*.whl /tmp/wheels/
COPY --chown=1000:1000 scripts/entrypoint.sh ./
ADD https://bootstrap.pypa.io/get-pip.py /tmp/get-pip.py
RUN python3 /tmp/get-pip.py && pip install /tmp/wheels/*.whl
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
RUN pip freeze | tee /opt/app/freeze.txt
ENTRYPOINT ["./entrypoint.sh"]
