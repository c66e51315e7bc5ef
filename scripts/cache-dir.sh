# scripts/cache-dir.sh — sourced by the build scripts: the one place that
# decides where bpfuml's cache is, and whether a kernel can be built there.

# Sets $cache (absolute, created): BPFUML_CACHE, else $XDG_CACHE_HOME/bpfuml,
# else ~/.cache/bpfuml.
bpfuml_cache_dir() {
	local dir=${BPFUML_CACHE:-}
	if [ -z "$dir" ]; then
		if [ -n "${XDG_CACHE_HOME:-}" ]; then dir=$XDG_CACHE_HOME/bpfuml
		elif [ -n "${HOME:-}" ]; then dir=$HOME/.cache/bpfuml
		else echo "bpfuml: neither HOME nor XDG_CACHE_HOME is set; set BPFUML_CACHE=DIR" >&2; exit 2
		fi
	fi
	if ! mkdir -p "$dir" || ! cache=$(cd "$dir" && pwd); then
		echo "bpfuml: cannot create the cache directory $dir; set BPFUML_CACHE=DIR" >&2
		exit 2
	fi
}

# Kernel trees are built in the cache, and the kernel's build refuses a
# source or output path with a blank or a colon ("source directory cannot
# contain spaces or colons") — after a 170 MB download.  Say so first.
bpfuml_cache_can_build_kernels() {
	case $cache in
	*[[:space:]]* | *:*)
		echo "bpfuml: the cache directory '$cache' contains a blank or a colon, and the" \
			"kernel's build refuses such paths; set BPFUML_CACHE to a directory without" \
			"them (for example BPFUML_CACHE=/var/tmp/bpfuml-$(id -un))" >&2
		exit 2 ;;
	esac
}
