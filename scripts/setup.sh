#!/usr/bin/env bash
# Install the system packages and toolchain gander's build, tests and demo need. Idempotent:
# apt-get runs only when a package is missing; rustup only when cargo is absent.
set -euo pipefail

PKGS=(tshark iproute2 openssl gnutls-bin gcc libc6-dev libpcap-dev libssl-dev libgnutls28-dev pkg-config iperf3 iptables iputils-ping ethtool chromium
      # openssl, gnutls-bin: the s_server and gnutls-serv the TLS survey tests start.
      # gcc, libc6-dev: the compiled libiec61850 peer (make cref).
      # strongSwan (charon, swanctl, the openssl plugin for ECDSA and ECP groups): the
      # independent IKEv1 peer of crates/gdoi/tests/it/strongswan_interop.rs (docs/gdoi.md).
      strongswan-charon strongswan-swanctl libstrongswan-standard-plugins
      # Cross builds of the standalone gateway (make cross) and their tests under emulation.
      gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-user)
PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
SUDO=""
[[ $(id -u) -eq 0 ]] || SUDO="sudo"

# The cross targets' OpenSSL (make cross, cross-test, dist): Debian's own libssl-dev for arm64
# and armhf, linked statically into the packages instead of OpenSSL compiled from source for
# each target (docs/testing.md). scripts/cross_cargo.sh fetches the package with `apt-get
# download` and unpacks it under the target directory: installing it (`apt-get install
# libssl-dev:arm64`) would tie the host's libssl-dev to the same version (Multi-Arch: same), and
# fails whenever the mirror has the architectures at different security updates. apt only needs
# to know the architectures: dpkg learns each once, then apt-get update fetches their lists.
# apt-get update, tolerant of a mirror in mid-sync: that fails one index ("File has unexpected
# size ... Mirror sync in progress?", seen on the armhf security list) and exits non-zero
# although every other list arrived. Try up to $1 times (default 3); then go on with the lists
# that did arrive: an install that still lacks a package fails there, naming it.
apt_update() {
    local i tries=${1:-3}
    for ((i = 1; i <= tries; i++)); do
        $SUDO apt-get update -qq && return 0
        echo "setup: apt-get update failed (try $i of $tries, above)"
        ((i < tries)) && sleep 10
    done
    echo "setup: going on with the package lists apt-get did fetch"
}

cross_lists=()
for arch in arm64 armhf; do
    if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
        echo "setup: adding the $arch architecture (apt lists only) for libssl-dev:$arch"
        $SUDO dpkg --add-architecture "$arch"
    fi
    apt-cache policy "libssl-dev:$arch" 2>/dev/null | grep -q 'Candidate: [0-9]' || cross_lists+=("$arch")
done

missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The venv needs ensurepip; Debian's python3 only has it with python3-venv.
if ! "$PYTHON" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    missing+=(python3-venv)
fi

if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # tshark's wireshark-common asks whether non-root users may capture; answer it up front.
    echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
    apt_update
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
elif ((${#cross_lists[@]})); then
    echo "setup: fetching the package lists of ${cross_lists[*]}"
    # Once: the lists it fetches name a libssl-dev for each architecture even when one index
    # fails, which is all scripts/cross_cargo.sh needs (and `make test` runs set-up three times).
    apt_update 1
else
    echo "setup: system packages present"
fi

if ! command -v cargo >/dev/null 2>&1 && [[ ! -x "$HOME/.cargo/bin/cargo" ]]; then
    echo "setup: installing Rust with rustup"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
else
    echo "setup: cargo present ($(PATH="$HOME/.cargo/bin:$PATH" cargo --version))"
fi

# The cross targets' standard libraries (make cross), when Rust came from rustup.
RUSTUP=$(command -v rustup || echo "$HOME/.cargo/bin/rustup")
if [[ -x $RUSTUP ]]; then
    for t in aarch64-unknown-linux-gnu armv7-unknown-linux-gnueabihf; do
        "$RUSTUP" target list --installed | grep -qx "$t" || "$RUSTUP" target add "$t"
    done
fi
