#!/usr/bin/env bash
# Release artefacts for each cross target (`make dist`): per target a tarball and a Debian
# package of the standalone gateway (binary, systemd unit, example config and key file, docs)
# and of the IEC 62351-9 key server gander-kdc (binary, systemd unit, example config, docs).
# Expects `make cross` to have built target/<triple>/release/gander-gateway and gander-kdc.
#
#   scripts/package.sh OUTDIR TRIPLE...
set -euo pipefail
cd "$(dirname "$0")/.."

out=$1
shift
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
target_dir=${CARGO_TARGET_DIR:-target}
mkdir -p "$out"

# What each package carries beside its binary and unit (ROOT is the staging directory).
extras_gander_gateway() {
    local root=$1 doc=$1/usr/share/doc/gander-gateway
    install -D -m 0644 packaging/gateway.toml.example "$doc/examples/gateway.toml"
    install -D -m 0644 packaging/keys.toml.example "$doc/examples/keys.toml"
    # Write access to /dev/cpu_dma_latency for the gander group (cpu_wakeup_latency_us).
    install -D -m 0644 packaging/60-gander-cpu-latency.rules \
        "$root/lib/udev/rules.d/60-gander-cpu-latency.rules"
    for d in gateway.md keys.md profiles.md; do
        install -D -m 0644 "docs/$d" "$doc/$d"
    done
}
# The key server: its own package (a key server is rarely on the gateway's box), the same
# layout, its state in /var/lib/gander (the unit's StateDirectory).
extras_gander_kdc() {
    local root=$1 doc=$1/usr/share/doc/gander-kdc
    install -D -m 0644 packaging/kdc.toml.example "$doc/examples/kdc.toml"
    install -D -m 0644 docs/gdoi.md "$doc/gdoi.md"
}

read -r -d '' describe_gander_gateway <<'TEXT' || true
IEC 62351-6 security gateway for IEC 61850 GOOSE, SV, R-GOOSE and R-SV
 A bump-in-the-wire that protects a legacy IED's GOOSE and R-GOOSE with
 IEC 62351-6 MACs and drops what fails verification. OpenSSL is linked
 statically. Configure /etc/gander/gateway.toml (examples in
 /usr/share/doc/gander-gateway/examples), then enable gander-gateway.service.
TEXT
read -r -d '' describe_gander_kdc <<'TEXT' || true
IEC 62351-9 GDOI key server for IEC 61850 GOOSE, SV, R-GOOSE and R-SV keys
 Distributes and rolls the IEC 62351-6 group keys of GOOSE, SV, R-GOOSE and
 R-SV with GDOI (RFC 6407) and the IEC 61850 payloads of RFC 8052: IKEv1 phase 1
 with pre-shared keys or certificates, GROUPKEY-PULL and signed GROUPKEY-PUSH.
 OpenSSL is linked statically. Configure /etc/gander/kdc.toml (example in
 /usr/share/doc/gander-kdc/examples), then enable gander-kdc.service.
TEXT

# package PKG: the tarball and the .deb of one binary for the current triple.
package() {
    local pkg=$1 var=${1//-/_}
    local bin=$target_dir/$triple/release/$pkg
    [[ -x $bin ]] || { echo "package: $bin missing: run make cross" >&2; exit 2; }
    root=$(mktemp -d)
    trap 'rm -rf "$root"' EXIT
    install -D -m 0755 "$bin" "$root/usr/bin/$pkg"
    # The build keeps line tables for profiling; the box gets the code only.
    "$strip" --strip-debug "$root/usr/bin/$pkg"
    install -D -m 0644 "packaging/$pkg.service" "$root/lib/systemd/system/$pkg.service"
    "extras_$var" "$root"
    install -d -m 0750 "$root/etc/gander"

    local name=$pkg-$version-$arch
    tar -C "$root" --owner=0 --group=0 -czf "$out/$name.tar.gz" usr lib etc

    install -d "$root/DEBIAN"
    local size description
    size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
    description=describe_$var
    cat > "$root/DEBIAN/control" <<CONTROL
Package: $pkg
Version: $version
Architecture: $arch
Maintainer: gander developers <gander@example.invalid>
Installed-Size: $size
Depends: libc6 (>= 2.31), libgcc-s1, adduser
Section: net
Priority: optional
Description: ${!description}
CONTROL
    cat > "$root/DEBIAN/postinst" <<'POSTINST'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
    getent group gander >/dev/null || addgroup --system gander
    getent passwd gander >/dev/null || adduser --system --ingroup gander --no-create-home --home /nonexistent gander
    chown root:gander /etc/gander
    if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
    # Apply a packaged udev rule (the gateway's /dev/cpu_dma_latency access) without a reboot.
    if [ -d /run/udev ] && command -v udevadm >/dev/null; then
        udevadm trigger --name-match=cpu_dma_latency 2>/dev/null || true
    fi
fi
POSTINST
    chmod 0755 "$root/DEBIAN/postinst"
    dpkg-deb --root-owner-group --build "$root" "$out/${name}.deb" >/dev/null
    rm -rf "$root"
    trap - EXIT
    echo "package: $out/$name.tar.gz $out/$name.deb"
}

for triple in "$@"; do
    case $triple in
        aarch64-unknown-linux-gnu) arch=arm64; strip=aarch64-linux-gnu-strip ;;
        armv7-unknown-linux-gnueabihf) arch=armhf; strip=arm-linux-gnueabihf-strip ;;
        x86_64-unknown-linux-gnu) arch=amd64; strip=strip ;;
        *) echo "package: no Debian architecture for $triple" >&2; exit 2 ;;
    esac
    package gander-gateway
    package gander-kdc
done
