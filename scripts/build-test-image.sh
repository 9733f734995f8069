#!/usr/bin/env bash
# Builds the Docker test images without any registry and prints the main image's name as the LAST line.
#   hermes-batch-test:bookworm  debootstrap minbase + python3, bash, coreutils, procps; user `agent` (uid 1000)
#   hermes-batch-test:busybox   Debian's busybox-static only (no python, no bash): for python-less tests
# Each image is skipped when it already exists. Needs: docker engine up, debootstrap, busybox-static, root.
# The Debian mirror comes from this machine's apt sources (see apt_mirror); --print-mirror prints it and exits.
set -euo pipefail

MAIN_IMAGE=${HERMES_TEST_IMAGE:-hermes-batch-test:bookworm}
BUSYBOX_IMAGE=${HERMES_TEST_BUSYBOX_IMAGE:-hermes-batch-test:busybox}
SUITE=bookworm

log() { echo "build-test-image: $*" >&2; }

TMP_DIRS=()
trap 'for d in "${TMP_DIRS[@]}"; do rm -rf "$d"; done' EXIT

image_exists() { docker image inspect "$1" >/dev/null 2>&1; }

# The Debian mirror this machine's apt already uses for $SUITE: one-line `deb [opts] URI SUITE …` entries in
# sources.list and sources.list.d/*.list, and deb822 stanzas (Types: deb, URIs:, Suites:) in *.sources.
# No host is written here: a machine without a matching source must say which one (HERMES_DEBIAN_MIRROR).
apt_mirror() {
  if [[ -n "${HERMES_DEBIAN_MIRROR:-}" ]]; then echo "$HERMES_DEBIAN_MIRROR"; return; fi
  local dir=${HERMES_APT_DIR:-/etc/apt} site="" f files=()
  for f in "$dir/sources.list" "$dir"/sources.list.d/*.list; do
    if [[ -f "$f" ]]; then files+=("$f"); fi
  done
  if ((${#files[@]})); then site=$(awk -v s="$SUITE" '
    { sub(/#.*/, "") }
    $1 == "deb" {
      i = 2
      if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
      if ($(i + 1) == s) { print $i; exit }
    }' "${files[@]}"); fi
  if [[ -z "$site" ]]; then
    for f in "$dir"/sources.list.d/*.sources; do
      if [[ ! -f "$f" ]]; then continue; fi
      site=$(awk -v s="$SUITE" '
        function check() { if (deb && suite && uri != "") { print uri; found = 1; exit } }
        /^[ \t]*#/ { next }
        /^[ \t]*$/ { check(); deb = 0; suite = 0; uri = ""; next }
        tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
        tolower($1) == "uris:" { uri = $2 }
        tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == s) suite = 1 }
        END { if (!found) check() }' "$f")
      if [[ -n "$site" ]]; then break; fi
    done
  fi
  if [[ -z "$site" ]]; then
    log "no apt source for $SUITE in $dir/sources.list or $dir/sources.list.d/; set HERMES_DEBIAN_MIRROR=<URL of a Debian mirror>"
    return 1
  fi
  echo "$site"
}

build_busybox() {
  local bb root
  bb=$(command -v busybox || true)
  [[ -n "$bb" ]] || { log "busybox not found (apt-get install -y busybox-static)"; return 1; }
  if ! "$bb" --list >/dev/null 2>&1 || ldd "$bb" >/dev/null 2>&1; then
    log "$bb is not a static busybox (apt-get install -y busybox-static)"; return 1
  fi
  root=$(mktemp -d /tmp/hermes-busybox.XXXXXX)
  TMP_DIRS+=("$root")
  mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,tmp,work,root,proc,sys,dev}
  chmod 1777 "$root/tmp"
  cp "$bb" "$root/bin/busybox"
  local applet
  for applet in $("$bb" --list); do
    [[ "$applet" == busybox ]] || ln -sf busybox "$root/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
  printf 'root:x:0:\n' >"$root/etc/group"
  tar -C "$root" -c . | docker import -c 'WORKDIR /work' -c 'ENV PATH=/bin:/sbin:/usr/bin:/usr/sbin' - "$BUSYBOX_IMAGE" >/dev/null
  rm -rf "$root"
  log "built $BUSYBOX_IMAGE"
}

build_bookworm() {
  local root mirror
  command -v debootstrap >/dev/null || { log "debootstrap not found (apt-get install -y debootstrap)"; return 1; }
  mirror=$(apt_mirror) || return 1
  root=$(mktemp -d /tmp/hermes-rootfs.XXXXXX)
  TMP_DIRS+=("$root")
  log "debootstrap $SUITE from $mirror (takes ~40 s)"
  debootstrap --variant=minbase --include=python3,bash,ca-certificates,procps,coreutils \
    "$SUITE" "$root" "$mirror" >/tmp/hermes-debootstrap.log 2>&1 \
    || { log "debootstrap failed; see /tmp/hermes-debootstrap.log"; tail -n 20 /tmp/hermes-debootstrap.log >&2; return 1; }
  # An unprivileged user so the backend's "run as the image's user" path is exercised.
  chroot "$root" /usr/sbin/useradd --uid 1000 --create-home --shell /bin/bash agent
  mkdir -p "$root/work"
  chown 1000:1000 "$root/work"
  rm -rf "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* "$root"/var/log/* \
    "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/*
  tar -C "$root" -c . | docker import -c 'WORKDIR /work' - "$MAIN_IMAGE" >/dev/null
  rm -rf "$root"
  log "built $MAIN_IMAGE"
}

if [[ "${1:-}" == "--print-mirror" ]]; then apt_mirror; exit; fi

docker version >/dev/null 2>&1 || { log "docker engine not answering (run scripts/start-dockerd.sh)"; exit 1; }

if image_exists "$BUSYBOX_IMAGE"; then log "$BUSYBOX_IMAGE exists"; else build_busybox; fi
if image_exists "$MAIN_IMAGE"; then log "$MAIN_IMAGE exists"; else build_bookworm; fi

echo "$MAIN_IMAGE"
