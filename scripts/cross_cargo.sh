#!/usr/bin/env bash
# cargo for one cross target with that target's OpenSSL (`make cross`, `make cross-test`):
#
#   scripts/cross_cargo.sh TRIPLE SUBCOMMAND [cargo arguments...]
#
# CROSS_OPENSSL picks the OpenSSL the gateway and the key server link, statically in both cases,
# so the packages need nothing beyond libc (docs/gateway.md, "Raspberry Pi and other small boxes"):
# * `debian` (the default): Debian's libssl-dev for the target architecture (`libssl-dev:arm64`,
#   `libssl-dev:armhf`; the 3.0 LTS series the host links too, at the version apt offers, so
#   with Debian's security updates). Nothing is compiled: the package is fetched with `apt-get
#   download` (scripts/setup.sh makes apt know the architecture) and unpacked under the target
#   directory, once per version. Unpacked, not installed: an installed libssl-dev:arm64 must be
#   the very version of the host's libssl-dev (Multi-Arch: same), which ties the host's OpenSSL
#   to the cross build and fails while a mirror has the architectures at different updates.
# * `vendored`: OpenSSL 3.5 built from source by `openssl-src` (the `vendored-openssl` features),
#   for a target Debian has no package for. Compiling OpenSSL's C code for the target is most of
#   the cross build's time (docs/testing.md).
#
# openssl-sys reads `<TRIPLE>_OPENSSL_LIB_DIR`, `_INCLUDE_DIR` (one directory) and `_STATIC`.
# Debian splits the headers: `usr/include/openssl` holds the common ones and
# `usr/include/<multiarch>/openssl` the per-architecture `opensslconf.h` and `configuration.h`,
# which openssl-sys's header check (expando.c through the cross C preprocessor) includes too:
# that directory is passed as the target's CFLAGS (`-isystem`, searched before the host's
# /usr/include, which holds the host's OpenSSL headers, perhaps of another version).
set -euo pipefail
usage="usage: cross_cargo.sh TRIPLE SUBCOMMAND [ARGS...]"
triple=${1:?$usage}
sub=${2:?$usage}
shift 2
case $triple in
    aarch64-unknown-linux-gnu) multiarch=aarch64-linux-gnu; arch=arm64 ;;
    armv7-unknown-linux-gnueabihf) multiarch=arm-linux-gnueabihf; arch=armhf ;;
    *) echo "cross_cargo: no Debian architecture for $triple" >&2; exit 2 ;;
esac
features=()
case ${CROSS_OPENSSL:-debian} in
    debian)
        target_dir=${CARGO_TARGET_DIR:-$(cd "$(dirname "$0")/.." && pwd)/target}
        root=$target_dir/cross-openssl/$arch
        version=$(apt-cache policy "libssl-dev:$arch" 2>/dev/null | sed -n 's/^ *Candidate: \([0-9].*\)/\1/p')
        [[ -n $version ]] || { echo "cross_cargo: apt knows no libssl-dev:$arch: run make setup (it adds the $arch architecture to apt's lists)" >&2; exit 2; }
        if [[ ! -e $root/.version || $(cat "$root/.version") != "$version" ]]; then
            echo "cross_cargo: fetching libssl-dev:$arch $version (Debian) into $root"
            rm -rf "$root"
            mkdir -p "$root"
            if ! (cd "$root" && apt-get download -qq "libssl-dev:$arch=$version" 2>"$root/download.log"); then
                cat "$root/download.log" >&2
                echo "cross_cargo: apt-get download libssl-dev:$arch=$version failed" >&2
                exit 2
            fi
            rm -f "$root/download.log"
            deb=$(ls "$root"/libssl-dev_*.deb)
            dpkg-deb -x "$deb" "$root"
            rm -f "$deb"
            echo "$version" > "$root/.version"
        fi
        lib=$root/usr/lib/$multiarch
        for f in "$lib/libssl.a" "$lib/libcrypto.a" "$root/usr/include/$multiarch/openssl/opensslconf.h"; do
            [[ -e $f ]] || { echo "cross_cargo: $f missing from libssl-dev:$arch" >&2; exit 2; }
        done
        env_prefix=$(tr 'a-z-' 'A-Z_' <<<"$triple")
        export "${env_prefix}_OPENSSL_LIB_DIR=$lib"
        export "${env_prefix}_OPENSSL_INCLUDE_DIR=$root/usr/include"
        export "${env_prefix}_OPENSSL_STATIC=1"
        cflags_var=CFLAGS_${triple//-/_}
        export "$cflags_var=${!cflags_var:-} -isystem $root/usr/include/$multiarch"
        ;;
    vendored) features=(--features gander-sec/vendored-openssl) ;;
    *) echo "cross_cargo: CROSS_OPENSSL is debian or vendored, not $CROSS_OPENSSL" >&2; exit 2 ;;
esac
exec cargo "$sub" --target "$triple" "${features[@]}" "$@"
