# The interlingua image: Ray's official base image + interlingua with its pinned dependencies, so the
# head, the workers and the job drivers run the same code. Two variants from one file:
#
#   docker build --build-arg VARIANT=cpu -t registry.example.com/interlingua:0.1.0-cpu .
#   docker build --build-arg VARIANT=gpu -t registry.example.com/interlingua:0.1.0-gpu .
#
# VARIANT=cpu: rayproject/ray:<ray>-py311-cpu and the CPU torch wheel.
# VARIANT=gpu: rayproject/ray:<ray>-py311-gpu (CUDA) and the CUDA torch wheel from PyPI; on GPUs the
# engine uses NCCL and bf16 by itself.
ARG RAY_VERSION=2.60.0
ARG VARIANT=cpu
FROM rayproject/ray:${RAY_VERSION}-py311-${VARIANT}

ARG VARIANT=cpu
# The Debian/Ubuntu packages behind the offline demo data (Bible via diatheke, debian-reference,
# Apertium en<->es); drop them if you only bring your own data.
USER root
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      diatheke sword-text-kjv sword-text-sparv debian-reference-en debian-reference-de \
      debian-reference-fr debian-reference-es apertium apertium-eng-spa \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /mnt/interlingua && chown ray:users /mnt/interlingua
USER ray
WORKDIR /home/ray/interlingua

# The exact dependency set of uv.lock first (a layer that changes only with the lock), then the source
# (everything .dockerignore leaves). torch is locked to the CPU wheel of /opt/wheels on developer machines;
# here the same torch version comes from PyTorch's CPU index (cpu) or PyPI's CUDA build (gpu).
COPY --chown=ray:users pyproject.toml uv.lock ./
RUN pip install --no-cache-dir uv==0.13.8 \
 && uv export --locked --no-dev --no-hashes --no-emit-project --no-emit-package torch \
      --format requirements-txt -o /tmp/requirements.txt \
 && TORCH_VERSION="$(python -c "import tomllib; print(next(p['version'] for p in tomllib.load(open('uv.lock', 'rb'))['package'] if p['name'] == 'torch').split('+')[0])")" \
 && if [ "$VARIANT" = "cpu" ]; then \
      pip install --no-cache-dir "torch==${TORCH_VERSION}" --index-url https://download.pytorch.org/whl/cpu; \
    else pip install --no-cache-dir "torch==${TORCH_VERSION}"; fi \
 && pip install --no-cache-dir -r /tmp/requirements.txt
COPY --chown=ray:users . .
RUN pip install --no-cache-dir --no-deps . && interlingua --version && interlingua --help > /dev/null

# State (corpora, checkpoints, assets) on the shared volume the manifests mount; DeepSpeed's CPU
# accelerator on CPU nodes is chosen by the engine itself.
ENV INTERLINGUA_HOME=/mnt/interlingua/state \
    RAY_DEDUP_LOGS=1 \
    PYTHONUNBUFFERED=1
WORKDIR /home/ray
