# nco-rs (Debian package): put nco-rs's operators (/usr/lib/nco-rs/bin) before NCO's
# (/usr/bin) on PATH in login shells. NCO's stay reachable as /usr/bin/ncks etc.; to
# prefer NCO again, remove /usr/lib/nco-rs/bin from PATH in your shell's profile.
case ":${PATH}:" in
    *:/usr/lib/nco-rs/bin:*) ;;
    *) PATH="/usr/lib/nco-rs/bin:${PATH}" ;;
esac
export PATH
