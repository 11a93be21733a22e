#!/usr/bin/env bash
# Build the Debian package of nco-rs: target/debian/nco-rs_<version>_<arch>.deb, with
# dpkg-deb (part of dpkg, on every Debian machine; no cargo-deb to install). It holds the
# operators and aliases in /usr/lib/nco-rs/bin (stripped of debug information: the
# release profile keeps it for profiling), their man pages in
# /usr/lib/nco-rs/share/man/man1, completions where bash, zsh and fish look,
# /etc/profile.d/nco-rs.sh putting /usr/lib/nco-rs/bin first on PATH, and nothing
# Debian's nco package owns. Depends: the Debian packages of the shared libraries the
# operators link to (objdump's NEEDED, found with ldd and dpkg -S) and of the libnetcdf
# they load at run time, at least the versions built against.
#
#   bash scripts/deb.sh [--no-build] [--fast]
#
# --no-build packages what target/release holds; --fast compresses with zstd level 3
# (about 40 MB, a second or two) instead of xz (about 12 MB, a minute of one core: xz's
# window spans the near-identical alias binaries), for a package installed at once (CI).
set -euo pipefail
cd "$(dirname "$0")/.."
build=1
compress=(-Zxz)
for a in "$@"; do
    case "$a" in
        --no-build) build=0 ;;
        --fast) compress=(-Zzstd -z3) ;;
        *) echo "deb.sh: ERROR unknown argument $a (usage: deb.sh [--no-build] [--fast])" >&2; exit 1 ;;
    esac
done
for t in dpkg-deb strip objdump ldd; do
    command -v "$t" >/dev/null || { echo "deb.sh: ERROR $t not found (packages dpkg, binutils, libc-bin)" >&2; exit 1; }
done
if ((build)); then
    cargo build --release --workspace --bins
fi
dist=target/release/nco-dist
[ -x "$dist" ] || { echo "deb.sh: ERROR $dist missing: build first (or drop --no-build)" >&2; exit 1; }

version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
arch=$(dpkg --print-architecture)
stage=target/debian/stage
root=target/debian/root
rm -rf "$stage" "$root"
mkdir -p "$stage" "$root/DEBIAN"
"$dist" stage "$stage"

lib="$root/usr/lib/nco-rs"
install -d "$lib/bin" "$lib/share/man/man1" "$root/usr/share/bash-completion/completions" \
    "$root/usr/share/zsh/vendor-completions" "$root/usr/share/fish/vendor_completions.d" \
    "$root/etc/profile.d" "$root/usr/share/doc/nco-rs"
for f in "$stage"/bin/*; do
    strip --strip-debug -o "$lib/bin/$(basename "$f")" "$f"
done
chmod 755 "$lib"/bin/*
for f in "$stage"/man/*.1; do
    gzip -9n <"$f" >"$lib/share/man/man1/$(basename "$f").gz"
done
install -m 644 "$stage"/bash/* "$root/usr/share/bash-completion/completions/"
install -m 644 "$stage"/zsh/* "$root/usr/share/zsh/vendor-completions/"
install -m 644 "$stage"/fish/* "$root/usr/share/fish/vendor_completions.d/"
install -m 644 dist/profile.d/nco-rs.sh "$root/etc/profile.d/"
install -m 644 README.md "$root/usr/share/doc/nco-rs/"
cat >"$root/usr/share/doc/nco-rs/copyright" <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: nco-rs

Files: *
Copyright: nco-rs developers
License: MIT or Apache-2.0
EOF
chmod 644 "$root/usr/share/doc/nco-rs/copyright"

# The Debian packages of the libraries the operators link to directly (NEEDED), at least
# the installed versions (those pull in what the libraries themselves need).
needed=$(objdump -p "$lib"/bin/* | awk '$1 == "NEEDED" {print $2}' | sort -u)
libs=$(for f in "$lib"/bin/*; do ldd "$f"; done | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u)
depends=$( (for so in $needed; do
        # The dynamic loader (ld-linux*.so, listed by ldd without "=>") is libc6's.
        case "$so" in ld-linux*) echo "libc6"; continue ;; esac
        path=$(awk -v so="$so" '$1 == so {print $2; exit}' <<<"$libs")
        [ -n "$path" ] || { echo "deb.sh: ERROR $so not found by ldd" >&2; exit 1; }
        dpkg -S "$path" 2>/dev/null || dpkg -S "$(readlink -f "$path")" ||
            { echo "deb.sh: ERROR no package owns $path" >&2; exit 1; }
    done
    # libnetcdf is loaded at run time, not linked (nco-h5's syslib): the package of the
    # library the build loads (the target of its development link).
    nc_so=$(readlink -f "$(pkg-config --variable=libdir netcdf)/libnetcdf.so")
    dpkg -S "$nc_so" || { echo "deb.sh: ERROR no package owns $nc_so" >&2; exit 1; }
    ) | cut -d: -f1 | sort -u |
    while read -r pkg; do
        echo "$pkg (>= $(dpkg-query -W -f='${Version}' "$pkg"))"
    done | paste -sd, - | sed 's/,/, /g')
[ -n "$depends" ] || { echo "deb.sh: ERROR no library package found for Depends" >&2; exit 1; }

echo "/etc/profile.d/nco-rs.sh" >"$root/DEBIAN/conffiles"
cat >"$root/DEBIAN/control" <<EOF
Package: nco-rs
Version: $version
Architecture: $arch
Maintainer: nco-rs developers <nco-rs@example.invalid>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends
Recommends: libudunits2-0
Section: science
Priority: optional
Description: netCDF Operators re-implemented in Rust, NCO 5.1.4-compatible
 Command-line tools taking the same options and printing the same numbers as
 NCO 5.1.4, installed in /usr/lib/nco-rs/bin beside Debian's nco package (which
 keeps /usr/bin); /etc/profile.d/nco-rs.sh puts them first on PATH.
 .
$(echo "Operators and aliases: $("$dist" names | paste -sd' ' -)." | fold -s -w 72 | sed 's/ *$//; s/^/ /')
EOF
deb="target/debian/nco-rs_${version}_${arch}.deb"
dpkg-deb --root-owner-group "${compress[@]}" --build "$root" "$deb"
rm -rf "$stage" "$root"
echo "built $deb ($(du -h "$deb" | cut -f1))"
