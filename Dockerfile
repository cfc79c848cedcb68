# utxod with RocksDB compiled in (build tag rocksdb), on Debian bookworm.
# docker compose up --build   (see docker-compose.yml)

# The build goes the README's way: make build installs librocksdb-dev
# (scripts/deps.sh, as root with apt-get) and builds with -tags rocksdb.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN GOFLAGS=-trimpath make build BIN=/out && rm -rf /var/lib/apt/lists/*
# corerest: a stand-in for bitcoind -rest serving block files (the replicas-demo profile).
RUN CGO_ENABLED=0 go build -trimpath -o /out/corerest ./testkit/cmd/corerest

FROM debian:bookworm-slim
# Runtime libraries of the build's -dev packages, and curl for the
# healthcheck.
RUN apt-get update \
 && apt-get install -y --no-install-recommends librocksdb7.8 curl ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home-dir /data --shell /usr/sbin/nologin utxod \
 && mkdir -p /data && chown utxod:utxod /data
COPY --from=build /out/utxod /out/corerest /usr/local/bin/
USER utxod
VOLUME /data
EXPOSE 8335
ENV UTXOD_DATADIR=/data UTXOD_BACKEND=rocksdb
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD curl -fsS http://127.0.0.1:8335/healthz || exit 1
ENTRYPOINT ["utxod"]
CMD ["serve", "--listen", "0.0.0.0:8335", "--allow-remote"]
