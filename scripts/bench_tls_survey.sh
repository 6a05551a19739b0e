#!/usr/bin/env bash
# Times `gander tls survey` against a matrix of local TLS servers like issue #22's (openssl
# s_server, gnutls-serv and gander's own MMS server, each configured to show one property),
# RUNS consecutive runs each, and prints per server the wall times and the median, then the
# median over the matrix. Everything runs in a network namespace of its own (unshare -n),
# loopback only: gnutls-serv listens on every address of the namespace, and nothing else can
# reach it.
#
#   scripts/bench_tls_survey.sh                  # sequential (the gentle default)
#   PARALLEL=4 scripts/bench_tls_survey.sh       # --parallel 4
#   RUNS=3 GANDER=target/release/gander scripts/bench_tls_survey.sh
#   ONLY=expired KEEP=out/ scripts/bench_tls_survey.sh   # one server; keep the JSON reports
#
# Needs root (unshare), openssl, gnutls-bin (gnutls-serv), iproute2.
set -euo pipefail
cd "$(dirname "$0")/.."
GANDER=${GANDER:-$PWD/target/release/gander}
RUNS=${RUNS:-3}
PARALLEL=${PARALLEL:-1}
EXTRA=${EXTRA:-}
if [[ -z ${GANDER_BENCH_NETNS:-} ]]; then
    exec unshare -n env GANDER_BENCH_NETNS=1 "$0" "$@"
fi
ip link set lo up
for tool in openssl gnutls-serv; do
    command -v "$tool" >/dev/null || { echo "bench_tls_survey: $tool missing (scripts/setup.sh)" >&2; exit 2; }
done
[[ -x $GANDER ]] || { echo "bench_tls_survey: $GANDER missing (cargo build --release -p gander-cli)" >&2; exit 2; }

work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

"$GANDER" pki init --dir "$work/pki" --rsa 1024,2048 --ecdsa p256 >/dev/null
R=$work/pki/rsa2048 R1=$work/pki/rsa1024 E=$work/pki/p256
cat >"$work/client.toml" <<EOF
[tls]
ca = ["$R/ca.pem", "$E/ca.pem", "$R1/ca.pem"]
cert = "$R/client.pem"
key = "$R/client.key"
EOF
cat >"$work/mms.toml" <<EOF
listen = "127.0.0.1:3782"
[tls]
ca = "$R/ca.pem"
cert = "$R/server.pem"
key = "$R/server.key"
versions = ["1.2", "1.3"]
EOF

# name|port|command (started in the background for the whole run)
S="openssl s_server -quiet -CAfile $R/ca.pem"
G="gnutls-serv --quiet --x509cafile $R/ca.pem"
matrix=(
    "tls12-3-suites|4401|$S -accept 127.0.0.1:4401 -cert $R/server.pem -key $R/server.key -tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:AES128-SHA256"
    "tls13-p384-ffdhe2048|4402|$S -accept 127.0.0.1:4402 -cert $R/server.pem -key $R/server.key -tls1_3 -groups P-384:ffdhe2048"
    "tls10-12-seclevel0|4403|$S -accept 127.0.0.1:4403 -cert $R/server.pem -key $R/server.key -min_protocol TLSv1 -max_protocol TLSv1.2 -cipher ALL:@SECLEVEL=0"
    "3des|4404|$G --port 4404 --x509certfile $R/server.pem --x509keyfile $R/server.key --priority NORMAL:-VERS-TLS1.3:+3DES-CBC"
    "client-cert-required|4405|$S -accept 127.0.0.1:4405 -cert $R/server.pem -key $R/server.key -Verify 1 -verify_return_error"
    "client-cert-optional|4406|$S -accept 127.0.0.1:4406 -cert $R/server.pem -key $R/server.key -verify 1 -verify_return_error"
    "no-tickets|4407|$S -accept 127.0.0.1:4407 -cert $R/server.pem -key $R/server.key -no_ticket"
    "rsa-1024|4408|$S -accept 127.0.0.1:4408 -cert $R1/server.pem -key $R1/server.key -cipher DEFAULT:@SECLEVEL=0"
    "ecdsa-p256|4409|$S -accept 127.0.0.1:4409 -cert $E/server.pem -key $E/server.key"
    "expired|4410|$S -accept 127.0.0.1:4410 -cert $R/expired.pem -key $R/client.key"
    "untrusted-ca|4411|$S -accept 127.0.0.1:4411 -cert $R/other.pem -key $R/client.key"
    "no-rfc5746|4412|$G --port 4412 --x509certfile $R/server.pem --x509keyfile $R/server.key --priority NORMAL:-VERS-TLS1.3:%DISABLE_SAFE_RENEGOTIATION"
    "client-renegotiation|4413|$S -accept 127.0.0.1:4413 -cert $R/server.pem -key $R/server.key -tls1_2 -client_renegotiation"
    "gnutls-required|4414|$G --port 4414 --x509certfile $R/server.pem --x509keyfile $R/server.key -r --verify-client-cert"
    "gander-mms|3782|$GANDER mms server --config $work/mms.toml"
)

# s_server ends when its standard input closes: give every server one that stays open as long
# as this script (a FIFO this shell holds open for reading and writing).
mkfifo "$work/stdin"
exec 9<>"$work/stdin"
for m in "${matrix[@]}"; do
    IFS='|' read -r name port cmd <<<"$m"
    $cmd <"$work/stdin" >"$work/$name.log" 2>&1 &
    pids+=($!)
done
for m in "${matrix[@]}"; do
    IFS='|' read -r name port _ <<<"$m"
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.1
    done
done

machine=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
echo "# gander tls survey, $RUNS runs per server, --parallel $PARALLEL; $(nproc) CPUs: $machine"
printf '%-24s %s\n' server "wall s per run (median)"
medians=()
for m in "${matrix[@]}"; do
    IFS='|' read -r name port _ <<<"$m"
    [[ -z ${ONLY:-} || $name == "$ONLY" ]] || continue
    times=()
    for _ in $(seq "$RUNS"); do
        t0=$(date +%s.%N)
        rc=0
        "$GANDER" tls survey "127.0.0.1:$port" --tls "$work/client.toml" --parallel "$PARALLEL" $EXTRA \
            --json >"$work/$name.json" 2>"$work/$name.err" || rc=$?
        t1=$(date +%s.%N)
        [[ $rc -eq 0 ]] || { echo "$name: exit $rc: $(cat "$work/$name.err")" >&2; }
        times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')")
    done
    med=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')
    medians+=("$med")
    printf '%-24s %s (%.1f)\n' "$name" "$(printf '%.1f ' "${times[@]}")" "$med"
    if [[ -n ${KEEP:-} ]]; then mkdir -p "$KEEP" && cp "$work/$name.json" "$work/$name.err" "$KEEP/"; fi
done
overall=$(printf '%s\n' "${medians[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')
printf 'median over %d servers: %.1f s\n' "${#medians[@]}" "$overall"
