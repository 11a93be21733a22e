#!/usr/bin/env bash
# Install nco-rs like a tool: every operator and alias into PREFIX/bin (without debug
# information), man pages into PREFIX/share/man/man1, and bash, zsh and fish completions
# where each shell looks under PREFIX/share. Default PREFIX: /usr/local (beside NCO, which Debian puts in
# /usr/bin; put PREFIX/bin first on PATH to use ours, README "Install").
#
#   bash scripts/install.sh [--prefix DIR] [--no-build] [--force]
#
# --no-build installs what target/release holds (after `cargo build --release
# --workspace --bins`); --force replaces files in PREFIX/bin that are not nco-rs's
# (by default the install stops rather than overwrite another program, NCO's say).
set -euo pipefail

prefix=/usr/local
build=1
force=0
while (($#)); do
    case "$1" in
        --prefix) prefix=${2:?--prefix needs a folder}; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        --no-build) build=0; shift ;;
        --force) force=1; shift ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "install.sh: ERROR unknown argument $1 (try --help)" >&2; exit 1 ;;
    esac
done

cd "$(dirname "$0")/.."
if ((build)); then
    command -v cargo >/dev/null || { echo "install.sh: ERROR cargo not found (see README)" >&2; exit 1; }
    cargo build --release --workspace --bins
fi
dist=target/release/nco-dist
[ -x "$dist" ] || { echo "install.sh: ERROR $dist missing: build first (or drop --no-build)" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
"$dist" stage "$stage"
# The release profile keeps debug information (for profiling); installed copies go without.
command -v strip >/dev/null || { echo "install.sh: ERROR strip not found (package binutils)" >&2; exit 1; }
strip --strip-debug "$stage"/bin/*

bin="$prefix/bin"
man="$prefix/share/man/man1"
bash_dir="$prefix/share/bash-completion/completions"
zsh_dir="$prefix/share/zsh/site-functions"
fish_dir="$prefix/share/fish/vendor_completions.d"

# Never overwrite another program of the same name (NCO's, if PREFIX is /usr).
if ((!force)); then
    for f in "$stage"/bin/*; do
        t="$bin/$(basename "$f")"
        if [ -e "$t" ] && ! "$t" --version 2>/dev/null | grep -q "nco-rs"; then
            echo "install.sh: ERROR $t exists and is not nco-rs's; choose another --prefix or use --force" >&2
            exit 1
        fi
    done
fi

mkdir -p "$bin" "$man" "$bash_dir" "$zsh_dir" "$fish_dir"
install -m 755 "$stage"/bin/* "$bin/"
install -m 644 "$stage"/man/* "$man/"
install -m 644 "$stage"/bash/* "$bash_dir/"
install -m 644 "$stage"/zsh/* "$zsh_dir/"
install -m 644 "$stage"/fish/* "$fish_dir/"
n=$(ls "$stage/bin" | wc -l)
echo "installed $n operators into $bin, man pages into $man, completions into $bash_dir, $zsh_dir, $fish_dir"
case ":$PATH:" in
    *":$bin:"*) ;;
    *) echo "note: $bin is not on PATH; add it first: export PATH=\"$bin:\$PATH\"" ;;
esac
