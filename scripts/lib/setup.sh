# Shared by scripts/test and .ci/run (source it): installing what the tests
# need with apt when we can, and saying plainly what is missing when we cannot.

# apt_install PACKAGE...: install Debian packages quietly (needs root and apt-get).
apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# can_apt_install: true when this shell may install packages itself.
can_apt_install() {
    [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1
}

# ensure_browser: Chromium and chromedriver for the dashboard tests
# (BILLPAY_CHROMIUM / BILLPAY_CHROMEDRIVER override where they are).
# Installs Debian's chromium + chromium-driver when missing and possible;
# otherwise stops before any build, naming what is missing and how to get it.
ensure_browser() {
    local chromium=${BILLPAY_CHROMIUM:-/usr/bin/chromium}
    local driver=${BILLPAY_CHROMEDRIVER:-chromedriver}
    if [[ -x $chromium ]] && command -v "$driver" >/dev/null 2>&1; then
        return 0
    fi
    if can_apt_install; then
        echo "== installing Chromium for the dashboard tests (apt-get install chromium chromium-driver)"
        apt_install chromium chromium-driver
        return 0
    fi
    cat >&2 <<MSG
error: the dashboard tests need Chromium and chromedriver, and they are missing
  ($chromium and/or $driver not found). Install them, then run this again:
    sudo apt-get install chromium chromium-driver        # Debian / Ubuntu
  or point BILLPAY_CHROMIUM and BILLPAY_CHROMEDRIVER at an existing Chromium and a
  matching chromedriver.
MSG
    return 1
}

# A fresh Python virtual environment at $1 (Debian's python3 comes without
# its venv module: installed when we may).
ensure_venv() {
    local venv=$1
    if ! python3 -m venv --clear "$venv" 2>/dev/null; then
        if ! can_apt_install; then
            echo "error: this needs python3 with venv: sudo apt-get install python3-venv" >&2
            exit 1
        fi
        echo "installing python3 and python3-venv (Debian)"
        apt_install python3 python3-venv
        python3 -m venv --clear "$venv"
    fi
}
