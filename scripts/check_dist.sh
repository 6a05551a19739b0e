#!/usr/bin/env bash
# Checks the artefacts of `make dist` as a user would meet them (run by `make test`): each .deb
# (gander-gateway and gander-kdc) has its control fields and files, its tarball holds the same
# binary, and the packaged binary runs on its architecture (under qemu-user here): `--check`
# accepts the shipped example config and refuses a broken one with a message. Every
# architecture must have both packages.
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
    pkg=$(dpkg-deb -f "$deb" Package)
    case $pkg in
        gander-gateway) example=gateway.toml; files="./usr/share/doc/gander-gateway/gateway.md ./lib/udev/rules.d/60-gander-cpu-latency.rules" ;;
        gander-kdc) example=kdc.toml; files="./usr/share/doc/gander-kdc/gdoi.md" ;;
        *) echo "check_dist: $deb: unexpected package $pkg" >&2; exit 1 ;;
    esac
    # The other package of the same architecture must be there too.
    other=gander-gateway
    [[ $pkg == gander-gateway ]] && other=gander-kdc
    [[ -e $(dirname "$deb")/$other-${deb##*/$pkg-} ]] || { echo "check_dist: $deb has no $other package beside it" >&2; exit 1; }
    contents=$(dpkg-deb -c "$deb")
    for f in ./usr/bin/$pkg ./lib/systemd/system/$pkg.service \
             ./usr/share/doc/$pkg/examples/$example $files; do
        grep -q " $f\$" <<<"$contents" || { echo "check_dist: $deb lacks $f" >&2; exit 1; }
    done

    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    dpkg-deb -x "$deb" "$tmp/root"
    bin=$tmp/root/usr/bin/$pkg
    # The unit runs the packaged binary.
    grep -q "^ExecStart=/usr/bin/$pkg " "$tmp/root/lib/systemd/system/$pkg.service" \
        || { echo "check_dist: $pkg.service does not run /usr/bin/$pkg" >&2; exit 1; }
    file_out=$(readelf -h "$bin" | sed -n 's/ *Machine: *//p')
    [[ $file_out == *"$machine"* ]] || { echo "check_dist: $bin is $file_out, not $machine" >&2; exit 1; }
    # OpenSSL is static: the binary needs nothing beyond libc.
    if readelf -d "$bin" | grep -E 'NEEDED.*(libssl|libcrypto|libgnutls)'; then
        echo "check_dist: $bin links a shared TLS library" >&2; exit 1
    fi
    tar_name=${deb%.deb}.tar.gz
    mkdir "$tmp/tar"
    tar -C "$tmp/tar" -xzf "$tar_name"
    cmp "$bin" "$tmp/tar/usr/bin/$pkg"

    cp "$tmp/root/usr/share/doc/$pkg/examples/$example" "$tmp/$example"
    if [[ $pkg == gander-gateway ]]; then
        cp "$tmp/root/usr/share/doc/gander-gateway/examples/keys.toml" "$tmp/keys.toml"
    else
        # The example's state file lives in /var/lib/gander; --check reads it if present.
        sed -i "s|^state = .*|state = \"$tmp/kdc-state.toml\"|" "$tmp/$example"
    fi
    out=$($qemu "$bin" --config "$tmp/$example" --check 2>"$tmp/check.err")
    [[ $out == *": ok"* ]] || { echo "check_dist: --check said: $out" >&2; exit 1; }
    # The shipped example must be clean, not merely valid: no warning either, except that its
    # interfaces (eth0, eth1) may not exist on the machine that builds the package, which
    # --check says (a warning about this host, not about the file).
    grep -v 'does not exist on this host' "$tmp/check.err" > "$tmp/check.rest" || true
    [[ ! -s $tmp/check.rest ]] || { echo "check_dist: --check warned: $(cat "$tmp/check.rest")" >&2; exit 1; }
    if [[ $pkg == gander-gateway ]]; then
        sed -i 's/^action = "verify"/action = "verify"\nbogus = 1/' "$tmp/$example"
    else
        sed -i 's/^appid = 1$/appid = 1\nbogus = 1/' "$tmp/$example"
    fi
    if err=$($qemu "$bin" --config "$tmp/$example" --check 2>&1); then
        echo "check_dist: a broken config was accepted" >&2; exit 1
    fi
    [[ $err == *"unknown field"* ]] || { echo "check_dist: unclear error: $err" >&2; exit 1; }
    echo "check_dist: $deb ($arch, $(stat -c %s "$bin") bytes): contents, tarball and --check under ${qemu%% *} ok"
    rm -rf "$tmp"
    trap - EXIT
done
