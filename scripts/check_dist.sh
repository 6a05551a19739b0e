#!/usr/bin/env bash
# Checks the artefacts of `make dist` as a user would meet them (run by `make test`): each .deb
# has its control fields and files, its tarball holds the same binary, and the packaged binary
# runs on its architecture (under qemu-user here): `--check` accepts the shipped example config
# and refuses a broken one with a message.
#
#   scripts/check_dist.sh DIST
set -euo pipefail
dist=$1
shopt -s nullglob
debs=("$dist"/*.deb)
((${#debs[@]})) || { echo "check_dist: no .deb in $dist" >&2; exit 1; }

for deb in "${debs[@]}"; do
    arch=$(dpkg-deb -f "$deb" Architecture)
    case $arch in
        arm64) qemu="qemu-aarch64 -L /usr/aarch64-linux-gnu"; machine=AArch64 ;;
        armhf) qemu="qemu-arm -L /usr/arm-linux-gnueabihf"; machine=ARM ;;
        amd64) qemu=""; machine=X86-64 ;;
        *) echo "check_dist: $deb: unexpected architecture $arch" >&2; exit 1 ;;
    esac
    [[ $(dpkg-deb -f "$deb" Package) == gander-gateway ]]
    contents=$(dpkg-deb -c "$deb")
    for f in ./usr/bin/gander-gateway ./lib/systemd/system/gander-gateway.service \
             ./usr/share/doc/gander-gateway/examples/gateway.toml ./usr/share/doc/gander-gateway/gateway.md; do
        grep -q " $f\$" <<<"$contents" || { echo "check_dist: $deb lacks $f" >&2; exit 1; }
    done

    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    dpkg-deb -x "$deb" "$tmp/root"
    bin=$tmp/root/usr/bin/gander-gateway
    file_out=$(readelf -h "$bin" | sed -n 's/ *Machine: *//p')
    [[ $file_out == *"$machine"* ]] || { echo "check_dist: $bin is $file_out, not $machine" >&2; exit 1; }
    # OpenSSL is static: the binary needs nothing beyond libc.
    if readelf -d "$bin" | grep -E 'NEEDED.*(libssl|libcrypto|libgnutls)'; then
        echo "check_dist: $bin links a shared TLS library" >&2; exit 1
    fi
    tar_name=${deb%.deb}.tar.gz
    mkdir "$tmp/tar"
    tar -C "$tmp/tar" -xzf "$tar_name"
    cmp "$bin" "$tmp/tar/usr/bin/gander-gateway"

    cp "$tmp/root/usr/share/doc/gander-gateway/examples/gateway.toml" "$tmp/gateway.toml"
    cp "$tmp/root/usr/share/doc/gander-gateway/examples/keys.toml" "$tmp/keys.toml"
    out=$($qemu "$bin" --config "$tmp/gateway.toml" --check 2>"$tmp/check.err")
    [[ $out == *": ok" ]] || { echo "check_dist: --check said: $out" >&2; exit 1; }
    # The shipped example must be clean, not merely valid: no warning either.
    [[ ! -s $tmp/check.err ]] || { echo "check_dist: --check warned: $(cat "$tmp/check.err")" >&2; exit 1; }
    sed -i 's/^action = "verify"/action = "verify"\nbogus = 1/' "$tmp/gateway.toml"
    if err=$($qemu "$bin" --config "$tmp/gateway.toml" --check 2>&1); then
        echo "check_dist: a broken config was accepted" >&2; exit 1
    fi
    [[ $err == *"unknown field"* ]] || { echo "check_dist: unclear error: $err" >&2; exit 1; }
    echo "check_dist: $deb ($arch, $(stat -c %s "$bin") bytes): contents, tarball and --check under ${qemu%% *} ok"
    rm -rf "$tmp"
    trap - EXIT
done
