#!/usr/bin/env bash
# deps.sh — make sure the Debian packages bpfuml builds with are installed.
#   scripts/deps.sh          what the UML kernel, harness and tests need
#   scripts/deps.sh qemu     in addition, what the x86_64 reference backend
#                            (make qemu-kernel, --backend qemu) needs
#
# Only bookworm's own suites are used (the system's apt sources are never
# touched).  As root, missing packages are installed; otherwise the exact
# apt-get line is printed and we exit 2.
set -euo pipefail

packages=(
	build-essential bc bison flex perl python3 git rsync cpio pkg-config
	xz-utils binutils dwarves
	libelf-dev zlib1g-dev libzstd-dev libcap-dev libssl-dev
	clang-19 llvm-19 lld
	# clang's libFuzzer and sanitizer runtimes: tests/fuzz (make fuzz).
	libclang-rt-19-dev
	# LLVM's disassembler for test_progs' checks of JITed code (__jited).
	llvm-19-dev
	libjson-c-dev python3-matplotlib
	# tests/areas/ci_action.py reads action.yml and the CI examples.
	python3-yaml
	# JUnit reports (--junit) are written with libxml2.
	libxml2-dev
	# The guest runs the host's programs: the selftests call ip, tc, ping,
	# ethtool, iptables-legacy, sysctl (network tests), keyctl and fsverity
	# (signed programs) inside UML.
	iproute2 iputils-ping ethtool iptables procps keyutils fsverity
	# nft sets up xdp_flowtable's flowtable (it skips without).
	nftables
)
if [ "${1:-}" = qemu ]; then
	# The x86_64 kernel's build (bzImage compression, objtool) and its VM.
	packages+=(qemu-system-x86 libssl-dev lz4)
fi

missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	[[ $status == ii* ]] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

line="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" != 0 ]; then
	echo "bpfuml: missing Debian packages: ${missing[*]}" >&2
	echo "bpfuml: root is needed only to install packages (building and every bpfuml" >&2
	echo "bpfuml: command run as you); install them as root with:" >&2
	echo "    apt-get update && $line" >&2
	exit 2
fi

echo "  DEPS    installing ${missing[*]} (from the system's bookworm sources)"
log=$(mktemp /tmp/bpfuml-deps.XXXXXX.log)
if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive $line; } >"$log" 2>&1; then
	tail -n 20 "$log" >&2
	echo "bpfuml: installing packages failed (full log: $log); try: apt-get update && $line" >&2
	exit 2
fi
rm -f "$log"
