# One image, four binaries: switchboard-operator, switchboard-webhook and
# switchboard-authorizer (the Helm chart runs each as its own Deployment
# with `command:`), and the
# `switchboard` CLI, so `kubectl exec` or a one-off pod can run
# `switchboard pubsub probe` with an engine's env Secret.
#
#   docker build -t ghcr.io/switchboard-dev/switchboard:0.1.0 .
#
# Debian 12 in every stage, so the runtime libraries are exactly the ones
# the binaries were linked against (nats.c, cpp-httplib, libyaml and
# prometheus-cpp are shared libraries from Debian's packages; the webhook's
# Boost.Beast/Asio are header-only, so the runtime stage needs no Boost).
#
# Stages: `runtime` (the shipped image without its binaries), `build` (the
# C++ build) and the last, unnamed one (runtime + the built binaries). The
# runtime stage comes first so that `--target runtime` never builds the
# build stage: the test node (scripts/images.sh) puts the binaries its own
# build tree made on top of it, the same libraries on the same Debian.

FROM debian:bookworm-slim AS runtime
# The same retry policy as scripts/lib/retry.sh (4 attempts, 5 s doubling),
# written out: this stage has none of the build context, and a COPY of the
# helper would stay in the shipped image as a layer of its own.
RUN for i in 1 2 3 4; do \
      apt-get update -qq \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
           ca-certificates libnats3.4 libcpp-httplib0.11 libyaml-0-2 \
           libprometheus-cpp-core1.0 libdeflate0 libssl3 zlib1g libcrypt1 \
      && break; \
      if [ "$i" = 4 ]; then echo "retry: runtime apt-get failed after 4 attempts" >&2; exit 1; fi; \
      d=$((5 << (i - 1))); echo "retry: runtime apt-get failed (attempt $i/4); retrying in ${d}s" >&2; sleep "$d"; \
    done \
 && rm -rf /var/lib/apt/lists/*
# The chart's securityContext runs as 65532 with a read-only root file system.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/switchboard-operator"]

FROM debian:bookworm AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/install-deps.sh
COPY scripts/lib/retry.sh scripts/lib/retry.sh
# Only what the build needs (compilers and -dev packages), not the test
# tools; its apt-get retries a transient failure (scripts/lib/retry.sh).
RUN bash scripts/install-deps.sh --build && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DSWITCHBOARD_TESTS=OFF -DSWITCHBOARD_BENCH=OFF \
 && cmake --build /build -j "$(nproc)" --target switchboard-operator switchboard-webhook switchboard-authorizer switchboard \
 && strip /build/bin/switchboard-operator /build/bin/switchboard-webhook /build/bin/switchboard-authorizer /build/bin/switchboard

FROM runtime
COPY --from=build /build/bin/switchboard-operator /build/bin/switchboard-webhook /build/bin/switchboard-authorizer /build/bin/switchboard /usr/local/bin/
