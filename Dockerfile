# billpay's container image (docs/production.md): built in one stage, run in
# a small one as an unprivileged user, the SQLite database on a volume.
#
#   docker build -t billpay .
#   docker run -d -p 127.0.0.1:8080:8080 -v billpay-data:/var/lib/billpay billpay
#
# CI lints this file with hadolint (scripts/dockerfile-check); it builds it
# too where a container engine is available.

FROM rust:1.95-slim-trixie AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p billpay --bin billpay \
    && install -m 0755 target/release/billpay /billpay

FROM debian:trixie-slim
# The service's own user and its data directory (the volume).
RUN useradd --system --uid 10001 --user-group --home-dir /var/lib/billpay --create-home \
        --shell /usr/sbin/nologin billpay
COPY --from=build /billpay /usr/local/bin/billpay
USER 10001:10001
WORKDIR /var/lib/billpay
# Every setting is also an environment variable (README "Configuration"):
# pass BILLPAY_MASTER_KEY and a supplier's keys with `docker run -e` or an
# env file, never in the image. On a volume, SQLite's key file is created
# beside the database (billpay.db.key) unless BILLPAY_MASTER_KEY is given.
ENV BILLPAY_LISTEN=0.0.0.0:8080 \
    BILLPAY_DATABASE_URL=sqlite:///var/lib/billpay/billpay.db \
    BILLPAY_LOG_FORMAT=json
VOLUME ["/var/lib/billpay"]
EXPOSE 8080
# GET /health over bash's /dev/tcp: the image needs no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/8080 && printf 'GET /health HTTP/1.0\\r\\n\\r\\n' >&3 && grep -q '\"status\":\"ok\"' <&3"]
ENTRYPOINT ["billpay"]
CMD ["serve"]
